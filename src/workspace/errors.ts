/**
 * One error class per failure, each with a stable Node-style `code` and the normalised workspace path it
 * concerns (`/` for the root). Messages and `cause` never contain a host path: backends build these from
 * workspace-relative paths only, and wrap host errors instead of chaining them.
 */
/** Every code a `WorkspaceError` can carry: the one list (tool results and the MCP server check against it). */
export const WORKSPACE_ERROR_CODES = [
  'ENOENT',
  'EISDIR',
  'ENOTDIR',
  'EEXIST',
  'ENOTEMPTY',
  'EACCES',
  'EROFS',
  'EINVAL',
  'EILSEQ',
  'EFBIG',
  'ESNAPSHOT',
  'ETIMEDOUT',
  'ABORT_ERR',
  'EPERM',
  'EDQUOT',
  'ECONFLICT',
  'ENOTSUP',
  'EUNAVAILABLE',
  'ECORRUPT',
  'ELOOP',
] as const;

export type WorkspaceErrorCode = (typeof WORKSPACE_ERROR_CODES)[number];

export class WorkspaceError extends Error {
  readonly code: WorkspaceErrorCode;
  /** Normalised workspace path (`/` for the root, no leading slash otherwise); may be absent for errors about no path. */
  readonly path: string | undefined;

  constructor(code: WorkspaceErrorCode, message: string, path?: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.path = path;
  }

  toJSON(): { name: string; code: WorkspaceErrorCode; message: string; path?: string } {
    return { name: this.name, code: this.code, message: this.message, ...(this.path === undefined ? {} : { path: this.path }) };
  }
}

function describe(path: string | undefined): string {
  return path === undefined ? '' : `: ${path}`;
}

export class FileNotFoundError extends WorkspaceError {
  constructor(path: string, message = `no such file or directory${describe(path)}`) {
    super('ENOENT', message, path);
  }
}

export class IsADirectoryError extends WorkspaceError {
  constructor(path: string, message = `is a directory${describe(path)}`) {
    super('EISDIR', message, path);
  }
}

export class NotADirectoryError extends WorkspaceError {
  constructor(path: string, message = `not a directory${describe(path)}`) {
    super('ENOTDIR', message, path);
  }
}

export class FileExistsError extends WorkspaceError {
  constructor(path: string, message = `already exists${describe(path)}`) {
    super('EEXIST', message, path);
  }
}

export class DirectoryNotEmptyError extends WorkspaceError {
  constructor(path: string, message = `directory not empty${describe(path)} (pass recursive: true to delete it with its contents)`) {
    super('ENOTEMPTY', message, path);
  }
}

/**
 * A path or symlink that leaves the sandbox, or a host path outside the allowed roots (`EACCES`); a chain of
 * symlinks too long to follow, a loop among them (`ELOOP`).
 */
export class PathEscapeError extends WorkspaceError {
  constructor(path: string | undefined, message = `path leaves the workspace${describe(path)}`, code: 'EACCES' | 'ELOOP' = 'EACCES') {
    super(code, message, path);
  }
}

/** The `PathEscapeError` for a chain of symlinks too long to follow (a loop among them, say). */
export function linkLoopError(path: string): PathEscapeError {
  return new PathEscapeError(path, `too many levels of symbolic links: ${path}`, 'ELOOP');
}

export class ReadOnlyError extends WorkspaceError {
  constructor(path: string | undefined, message = `the workspace is read-only${describe(path)}`) {
    super('EROFS', message, path);
  }
}

export class InvalidPathError extends WorkspaceError {
  constructor(path: string | undefined, message = `invalid path${describe(path)}`) {
    super('EINVAL', message, path);
  }
}

export class InvalidArgumentError extends WorkspaceError {
  constructor(message: string, path?: string) {
    super('EINVAL', message, path);
  }
}

export class InvalidContentError extends WorkspaceError {
  constructor(path: string, message = `file is not valid UTF-8 text${describe(path)} (use readBytes for binary content)`) {
    super('EILSEQ', message, path);
  }
}

/** Write size, path depth or segment length, or a hydration budget over its limit. */
export class LimitExceededError extends WorkspaceError {
  /** `'path'`: a path deeper than `maxPathDepth` or with a segment over `maxSegmentLength` (a shell says ENAMETOOLONG). */
  readonly limit: 'path' | undefined;
  constructor(message: string, path?: string, options: { limit?: 'path' } = {}) {
    super('EFBIG', message, path);
    this.limit = options.limit;
  }
}

/**
 * A name longer than the store allows (`ENAMETOOLONG`). Creating it is `EFBIG`; a lookup of it finds nothing
 * (`ENOENT`, `exists` false), as for any other name no entry has.
 */
export class NameTooLongError extends LimitExceededError {}

export class SnapshotError extends WorkspaceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ESNAPSHOT', message, undefined, options);
  }
}

/** Why one attempt of a restore failed and was retried. */
export interface RestoreRetry {
  /** The error code, e.g. `ENOTEMPTY` (a directory being removed was written into meanwhile). */
  code: string;
  /** Where the attempt stopped, workspace-relative (`''` is the root). */
  path: string;
}

export class SnapshotRestoreError extends WorkspaceError {
  /** The failed attempts of a restore that gave up (host backend), oldest first; empty otherwise. */
  readonly attempts: readonly RestoreRetry[];

  constructor(message: string, options?: { cause?: unknown; attempts?: readonly RestoreRetry[] }) {
    super('ESNAPSHOT', message, undefined, options);
    this.attempts = options?.attempts ?? [];
  }
}

/** A search or other long call passed its deadline. */
export class TimeoutError extends WorkspaceError {
  constructor(message: string, path?: string) {
    super('ETIMEDOUT', message, path);
  }
}

/** A call's `signal` was aborted; what was done is undone or reported by the caller. */
export class AbortError extends WorkspaceError {
  constructor(message = 'the operation was aborted', path?: string) {
    super('ABORT_ERR', message, path);
  }
}

/** A policy (allow/deny, blocked extension, confirm) or a mount's access level denies the operation. */
export class PolicyError extends WorkspaceError {
  constructor(message: string, path?: string) {
    super('EPERM', message, path);
  }
}

/** A workspace's byte or file quota would be exceeded. */
export class QuotaExceededError extends WorkspaceError {
  constructor(message: string, path?: string) {
    super('EDQUOT', message, path);
  }
}

/** A destination (or a file version) changed since the baseline the caller relied on. */
export class ConflictError extends WorkspaceError {
  constructor(message: string, path?: string) {
    super('ECONFLICT', message, path);
  }
}

/** The workspace's backend does not offer the operation (for example `fork` on an overlay or a composition). */
export class NotSupportedError extends WorkspaceError {
  constructor(message: string, path?: string) {
    super('ENOTSUP', message, path);
  }
}

/**
 * A session store (its database, object storage or directory) could not be used: it did not answer within
 * the deadline after retries, or it cannot be written. Nothing was published; the session stays at its last
 * published head, and the next publish carries everything since.
 */
export class StoreUnavailableError extends WorkspaceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('EUNAVAILABLE', message, undefined, options);
  }
}

/** Stored data failed its check (a blob whose bytes do not hash to its name, a head that does not parse). */
export class CorruptDataError extends WorkspaceError {
  constructor(message: string) {
    super('ECORRUPT', message);
  }
}

export function isWorkspaceError(error: unknown): error is WorkspaceError {
  return error instanceof WorkspaceError;
}
