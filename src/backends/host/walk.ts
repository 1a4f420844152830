import * as fs from 'node:fs';
import type { WalkEntry } from '../../workspace/base.js';
import { FileNotFoundError, NotADirectoryError } from '../../workspace/errors.js';
import type { NormalizedPath } from '../../workspace/paths.js';
import { isVisibleName } from './names.js';
import { pinDirectory, type Sandbox } from './sandbox.js';

/**
 * The protocol's walk (list-free traversal for glob, grep and subtree depth). It descends into real
 * directories only, never through a link; a link is reported as a file only when it resolves to a file
 * inside the root, so a link leaving the root is never read. Yielded paths keep the caller's spelling of
 * `base` (which may pass through a link inside the root); the directories read are the real ones.
 */
export async function* walkTree(sandbox: Sandbox, base: NormalizedPath): AsyncGenerator<WalkEntry> {
  let start;
  try {
    start = await sandbox.resolve(base, false);
  } catch (error) {
    if (error instanceof FileNotFoundError || error instanceof NotADirectoryError) return;
    throw error;
  }
  const st = start.stat;
  if (st === undefined) return;
  if (st.isSymbolicLink()) {
    if (await linkIsFile(sandbox, start.rel)) yield { path: base, isFile: true, isDirectory: false };
    return;
  }
  if (st.isFile()) {
    yield { path: base, isFile: true, isDirectory: false };
    return;
  }
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
        yield { path, isFile: false, isDirectory: true };
        stack.push({ logical: path, real: realPath });
      } else if (isFile) {
        yield { path, isFile: true, isDirectory: false };
      } else if (isLink) {
        yield { path, isFile: await linkIsFile(sandbox, realPath), isDirectory: false };
      }
    }
  }
}

async function linkIsFile(sandbox: Sandbox, rel: NormalizedPath): Promise<boolean> {
  try {
    const target = await sandbox.resolve(rel, true);
    return target.stat?.isFile() === true;
  } catch {
    return false;
  }
}
