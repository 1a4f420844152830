import {
  DirectoryNotEmptyError,
  FileExistsError,
  FileNotFoundError,
  IsADirectoryError,
  LimitExceededError,
  NameTooLongError,
  NotADirectoryError,
  NotSupportedError,
  linkLoopError,
  PathEscapeError,
  QuotaExceededError,
  ReadOnlyError,
  WorkspaceError,
} from './errors.js';
import { displayPath, type NormalizedPath } from './paths.js';

/**
 * Turns what a driver threw into the protocol's error for `path`. A `WorkspaceError` passes unchanged; a
 * Node-style `code` becomes the matching class; anything else becomes a generic `EINVAL` naming only the
 * code. The driver's own message is never kept: it may hold a host path or a storage key.
 */
export function fromDriverError(error: unknown, path: NormalizedPath): WorkspaceError {
  if (error instanceof WorkspaceError) return error;
  const shown = displayPath(path);
  const code = (error as { code?: unknown } | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new FileNotFoundError(shown);
    case 'EISDIR':
      return new IsADirectoryError(shown);
    case 'ENOTDIR':
      return new NotADirectoryError(shown);
    case 'EEXIST':
      return new FileExistsError(shown);
    case 'ENOTEMPTY':
      return new DirectoryNotEmptyError(shown);
    case 'EROFS':
      return new ReadOnlyError(shown);
    case 'ELOOP':
      return linkLoopError(shown);
    case 'EACCES':
    case 'EPERM':
      // A link leading out of the driver's root, said by `resolveLinks` of another copy of sessionfs (a
      // driver package with its own install): the same error, not a host's permission denied.
      if ((error as { name?: unknown }).name === 'PathEscapeError')
        return new PathEscapeError(shown, `a symlink leaves the workspace: ${shown}`);
      return new WorkspaceError('EACCES', `permission denied by the backend: ${shown}`, shown);
    case 'ENAMETOOLONG':
      return new NameTooLongError(`a name is longer than the backend allows: ${shown}`, shown);
    case 'EFBIG':
    case 'ENOSPC':
      return new LimitExceededError(`the backend is out of space or over a size limit (${code}): ${shown}`, shown);
    case 'ENOTSUP':
    case 'EOPNOTSUPP':
      return new NotSupportedError(`the backend does not support this here: ${shown}`, shown);
    case 'EDQUOT':
      return new QuotaExceededError(`the backend's quota is exhausted: ${shown}`, shown);
    default:
      return new WorkspaceError('EINVAL', `backend error${typeof code === 'string' ? ` (${code})` : ''}: ${shown}`, shown);
  }
}
