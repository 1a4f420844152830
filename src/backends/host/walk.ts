import * as fs from 'node:fs';
import type { DriverWalkEntry } from '../../workspace/driver.js';
import { FileNotFoundError, NotADirectoryError } from '../../workspace/errors.js';
import type { NormalizedPath } from '../../workspace/paths.js';
import { isVisibleName } from './names.js';
import { pinDirectory, type Sandbox } from './sandbox.js';

/**
 * The driver's walk (list-free traversal for glob, grep, snapshots and subtree depth). It descends into
 * real directories only, never through a link (links are yielded as links; the shared layer decides what
 * they resolve to). Yielded paths keep the caller's spelling of `base` (which may pass through a link inside
 * the root); the directories read are the real ones. A `base` that is not a directory yields nothing.
 */
export async function* walkTree(sandbox: Sandbox, base: NormalizedPath): AsyncGenerator<DriverWalkEntry> {
  let start;
  try {
    start = await sandbox.resolve(base, false);
  } catch (error) {
    if (error instanceof FileNotFoundError || error instanceof NotADirectoryError) return;
    throw error;
  }
  const st = start.stat;
  if (st === undefined) return;
  if (!st.isDirectory()) return;
  const stack: Array<{ logical: string; real: string }> = [{ logical: base, real: start.rel }];
  while (stack.length > 0) {
    const { logical, real } = stack.pop() as { logical: string; real: string };
    let dirents: fs.Dirent[];
    try {
      // Listed through a verified descriptor: a directory swapped for a link since it was seen is skipped.
      const pin = pinDirectory(sandbox, real, logical);
      try {
        dirents = await fs.promises.readdir(pin.path, { withFileTypes: true });
      } finally {
        pin.release();
      }
    } catch {
      continue; // removed or replaced during the walk
    }
    for (const dirent of dirents) {
      const name = dirent.name;
      if (!isVisibleName(name)) continue;
      const path = logical === '' ? name : `${logical}/${name}`;
      const realPath = real === '' ? name : `${real}/${name}`;
      let isDirectory = dirent.isDirectory();
      let isFile = dirent.isFile();
      let isLink = dirent.isSymbolicLink();
      if (!isDirectory && !isFile && !isLink) {
        try {
          const entry = await fs.promises.lstat(sandbox.abs(realPath));
          isDirectory = entry.isDirectory();
          isFile = entry.isFile();
          isLink = entry.isSymbolicLink();
        } catch {
          continue;
        }
      }
      if (isDirectory) {
        yield { path, kind: 'directory' };
        stack.push({ logical: path, real: realPath });
      } else if (isFile) {
        yield { path, kind: 'file' };
      } else if (isLink) {
        yield { path, kind: 'symlink' };
      }
    }
  }
}
