import * as fs from 'node:fs';
import type { DriverWalkEntry } from '../../workspace/driver.js';
import { FileNotFoundError, NotADirectoryError } from '../../workspace/errors.js';
import type { NormalizedPath } from '../../workspace/paths.js';
import { isVisibleName } from './names.js';
import { PIN_DIRECTORIES, pinDirectory, type PinnedDir, type Sandbox } from './sandbox.js';

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

/**
 * Pins a directory the walk listed so search workers can read its files by name (the sandbox check paid
 * once per directory, not per file): its path as the walk spelled it first (the common case: no link on
 * the way), else its real path. `pinDirectory` proves the pinned directory is that real directory inside
 * the root. Undefined where directories cannot be pinned by descriptor (then files are read one by one,
 * each resolved and verified), or when the directory is gone or no longer one.
 */
export function pinSearchDirectory(sandbox: Sandbox, path: NormalizedPath): PinnedDir | undefined {
  if (!PIN_DIRECTORIES) return undefined;
  try {
    return pinDirectory(sandbox, path, path);
  } catch {
    // passes through a link inside the root, or changed: pin the real directory instead
  }
  try {
    return pinDirectory(sandbox, sandbox.resolveSync(path, true).rel, path);
  } catch {
    return undefined;
  }
}
