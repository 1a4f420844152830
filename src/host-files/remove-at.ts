import * as fs from 'node:fs';
import { FileNotFoundError, NotADirectoryError, PathEscapeError } from '../workspace/errors.js';
import type { NormalizedPath } from '../workspace/paths.js';
import { pinChild, type PinnedDir } from './sandbox.js';

/**
 * Removes the entry `name` of a pinned directory, a whole directory included, never following a link: each
 * directory is pinned before it is listed, so one swapped for a link meanwhile is unlinked, not entered.
 */
export function removeAt(parent: PinnedDir, name: string | Buffer, shown: NormalizedPath): void {
  let child: PinnedDir;
  try {
    child = pinChild(parent, name, shown);
  } catch (error) {
    if (error instanceof FileNotFoundError) return;
    if (!(error instanceof NotADirectoryError) && !(error instanceof PathEscapeError)) throw error;
    // Not a directory (or a link): unlink it.
    try {
      fs.unlinkSync(parent.at(name));
    } catch (unlinkError) {
      const code = (unlinkError as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      // Became a directory since: go again.
      if (code === 'EISDIR' || code === 'EPERM') return removeAt(parent, name, shown);
      throw unlinkError;
    }
    return;
  }
  try {
    for (const entry of fs.readdirSync(child.path, { encoding: 'buffer' })) removeAt(child, entry, shown);
  } finally {
    child.release();
  }
  fs.rmdirSync(parent.at(name));
}
