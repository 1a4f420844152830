import { isWorkspaceError, type WorkspaceErrorCode } from '../workspace/errors.js';

/**
 * The errors the shell's commands see. just-bash's commands (like Node's callers) recognise a failure by
 * the `CODE: description, syscall 'path'` shape of its message, so every workspace error is rewritten into
 * that shape with the shell path, never a host path.
 */
export class ShellFsError extends Error {
  readonly code: string;
  constructor(code: string, description: string, syscall: string, shellPath: string) {
    super(`${code}: ${description}, ${syscall} '${shellPath}'`);
    this.name = 'ShellFsError';
    this.code = code;
  }
}

const DESCRIPTIONS: Partial<Record<WorkspaceErrorCode, [code: string, description: string]>> = {
  ENOENT: ['ENOENT', 'no such file or directory'],
  EISDIR: ['EISDIR', 'illegal operation on a directory'],
  ENOTDIR: ['ENOTDIR', 'not a directory'],
  EEXIST: ['EEXIST', 'file already exists'],
  ENOTEMPTY: ['ENOTEMPTY', 'directory not empty'],
  EACCES: ['EACCES', 'permission denied'],
  EROFS: ['EROFS', 'read-only file system'],
  EINVAL: ['EINVAL', 'invalid argument'],
  EILSEQ: ['EILSEQ', 'illegal byte sequence'],
  EFBIG: ['EFBIG', 'file too large'],
  EPERM: ['EPERM', 'operation not permitted'],
  EDQUOT: ['EDQUOT', 'disk quota exceeded'],
  ECONFLICT: ['EBUSY', 'resource busy (changed concurrently)'],
};

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
export function toShellError(error: unknown, syscall: string, shellPath: string, fatal: FatalErrors): Error {
  if (error instanceof ShellFsError) return error;
  if (!isWorkspaceError(error) || FATAL_CODES.has(error.code)) {
    fatal.record(error);
    return new ShellFsError('EIO', 'input/output error', syscall, shellPath);
  }
  const [code, description] = DESCRIPTIONS[error.code] ?? ['EIO', 'input/output error'];
  return new ShellFsError(code, description, syscall, shellPath);
}
