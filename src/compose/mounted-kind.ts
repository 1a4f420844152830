import { DriverWorkspace } from '../workspace/create-workspace.js';
import type { DriverEntryKind } from '../workspace/driver.js';
import { FileNotFoundError, NotADirectoryError, PathEscapeError } from '../workspace/errors.js';
import { baseName, parentPath } from '../workspace/paths.js';
import type { ListEntry } from '../workspace/types.js';
import { repathError } from './mounted-errors.js';
import type { Route } from './mount-table.js';

export function kindOf(entry: Pick<ListEntry, 'isSymlink' | 'isDirectory'>): DriverEntryKind {
  if (entry.isSymlink) return 'symlink';
  return entry.isDirectory ? 'directory' : 'file';
}

/**
 * What a path is inside a mounted workspace, without following a final link, through the protocol alone:
 * `stat` says whether the path itself is a link; a link the mount refuses to follow (it leaves that mount's
 * root) is still a link; a dangling one is the link itself to `stat` (or, for a workspace not built on the
 * driver API, found by name in its parent's listing).
 */
export async function kindIn({ mount, inner }: Route): Promise<DriverEntryKind | undefined> {
  try {
    return kindOf(await mount.workspace.stat(inner));
  } catch (error) {
    if (error instanceof PathEscapeError) return 'symlink';
    if (error instanceof NotADirectoryError) return undefined;
    if (!(error instanceof FileNotFoundError)) throw repathError(error, mount.path);
  }
  // A workspace built on the driver API reports a dangling link to `stat` as the link itself (the driver
  // contract): not found there means nothing is there, without listing the parent (a new file's every
  // write listed its whole directory). Any other workspace's dangling link is found by name.
  if (mount.workspace instanceof DriverWorkspace) return undefined;
  const siblings = await mount.workspace.list(parentPath(inner)).catch(() => []);
  const self = siblings.find((entry) => entry.name === baseName(inner));
  return self?.isSymlink === true ? 'symlink' : undefined;
}
