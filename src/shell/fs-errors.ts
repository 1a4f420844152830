import { isWorkspaceError, LimitExceededError, NameTooLongError, type WorkspaceErrorCode } from '../workspace/errors.js';

/**
 * The errors the shell's commands see. just-bash's commands (like Node's callers) recognise a failure by
 * the `CODE: description, syscall 'path'` shape of its message, so every workspace error is rewritten into
 * that shape with the shell path, never a host path.
 */
export class ShellFsError extends Error {
  readonly code: string;
  /** The shell path the error is about. */
  readonly path: string;
  constructor(code: string, description: string, syscall: string, shellPath: string) {
    super(`${code}: ${description}, ${syscall} '${shellPath}'`);
    this.name = 'ShellFsError';
    this.code = code;
    this.path = shellPath;
  }
}

const DESCRIPTIONS: Partial<Record<WorkspaceErrorCode | 'ENAMETOOLONG', [code: string, description: string]>> = {
  ENOENT: ['ENOENT', 'no such file or directory'],
  EISDIR: ['EISDIR', 'illegal operation on a directory'],
  ENOTDIR: ['ENOTDIR', 'not a directory'],
  EEXIST: ['EEXIST', 'file already exists'],
  ENOTEMPTY: ['ENOTEMPTY', 'directory not empty'],
  EINVAL: ['EINVAL', 'invalid argument'],
  EILSEQ: ['EILSEQ', 'illegal byte sequence'],
  ECONFLICT: ['EBUSY', 'resource busy (changed concurrently)'],
  ELOOP: ['ELOOP', 'Too many levels of symbolic links'],
  // Refusals: a real system's words, then the workspace's reason (a policy, a mount, a limit).
  EACCES: ['EACCES', 'Permission denied'],
  EROFS: ['EROFS', 'Read-only file system'],
  EPERM: ['EPERM', 'Operation not permitted'],
  ENOTSUP: ['ENOTSUP', 'Operation not supported'],
  EFBIG: ['EFBIG', 'File too large'],
  ENAMETOOLONG: ['ENAMETOOLONG', 'File name too long'],
  EDQUOT: ['EDQUOT', 'Disk quota exceeded'],
};

/** Codes that refuse an operation for a reason the workspace states; the shell shows that reason. */
const REFUSALS: ReadonlySet<string> = new Set(['EACCES', 'EROFS', 'EPERM', 'ENOTSUP', 'EFBIG', 'ENAMETOOLONG', 'EDQUOT']);

/** Codes that end the whole command instead of being one command's error: the call has to fail. */
const FATAL_CODES: ReadonlySet<string> = new Set(['ETIMEDOUT', 'ABORT_ERR', 'ESNAPSHOT']);

/**
 * Collects the failures that must fail the tool call (a deadline, an abort, an internal error) while the
 * shell turns every other error into a command's non-zero exit status, as a real system would.
 */
export class FatalErrors {
  readonly errors: unknown[] = [];
  get first(): unknown {
    return this.errors[0];
  }
  record(error: unknown): void {
    this.errors.push(error);
  }
}

/** Rewrites a workspace error for the shell, recording the ones that must fail the call. */
export function toShellError(error: unknown, syscall: string, shellPath: string, fatal: FatalErrors): ShellFsError {
  if (error instanceof ShellFsError) return error;
  if (!isWorkspaceError(error) || FATAL_CODES.has(error.code)) {
    fatal.record(error);
    return new ShellFsError('EIO', 'input/output error', syscall, shellPath);
  }
  // A path over the depth or segment limit is a name too long, as a real system says, not a file too large.
  const key =
    (error instanceof LimitExceededError && error.limit === 'path') || error instanceof NameTooLongError ? 'ENAMETOOLONG' : error.code;
  const [code, description] = DESCRIPTIONS[key] ?? ['EIO', 'input/output error'];
  return new ShellFsError(code, REFUSALS.has(code) ? `${description} (${error.message})` : description, syscall, shellPath);
}

/** A refusal as a command would print it: `Read-only file system (the workspace is read-only)`. */
export function refusalText(error: ShellFsError): string | undefined {
  if (!REFUSALS.has(error.code)) return undefined;
  return error.message.slice(error.code.length + 2).replace(/, \w+ '[^']*'$/, '');
}

/** `cmd: OPERAND: No such file or directory` and `cmd: cannot VERB 'OPERAND': No such file or directory`. */
const NOT_FOUND_LINE = /^([^:\n]+: (?:cannot \w+ )?)('?)([^'\n]+?)\2: No such file or directory$/gm;
/** Our own error shape where a command prints an error's message as it is (`mv`, `rm`, `mkdir`, `ln`). */
const REFUSAL_MESSAGE = /\b(?:EACCES|EROFS|EPERM|ENOTSUP|EFBIG|ENAMETOOLONG|EDQUOT): ([^\n]*?), \w+ '[^'\n]*'/g;

/**
 * Makes the refusals a command met read as a real system's (`rm: cannot remove 'x': Operation not permitted
 * (the mount at logs is append-only …)`). Some of just-bash's commands print "No such file or directory" for
 * any failed write (`tee`, `sed -i`, `chmod`): where the shell met a refusal for that very path
 * (`refusals`, by shell path), the line says the refusal instead.
 */
export function explainRefusals(stderr: string, refusals: ReadonlyMap<string, string>): string {
  const plain = stderr.replace(REFUSAL_MESSAGE, '$1');
  if (refusals.size === 0) return plain;
  return plain.replace(NOT_FOUND_LINE, (line, head: string, quote: string, operand: string) => {
    const named = `/${operand.replace(/^(\.\/)+/, '').replace(/^\/+/, '')}`.replace(/(?<=.)\/+$/, '');
    const matches = [...refusals].filter(([path]) => path === named || path.endsWith(named === '/' ? '\0' : named));
    return matches.length === 1 ? `${head}${quote}${operand}${quote}: ${matches[0]![1]}` : line;
  });
}
