import * as fs from 'node:fs';
import type { NormalizedPath } from '../../workspace/paths.js';
import { replaceFile, replaceSymlink } from './atomic.js';
import { isVisibleName } from '../../host-files/names.js';
import { READ_FLAGS } from '../../host-files/read-range.js';
import { pinChild, type PinnedDir } from '../../host-files/sandbox.js';

/** Copies a file (bytes and permission bits) or a link (as a link); other kinds are not copied. */
export async function copyLeaf(sourceAbs: string, st: fs.Stats, targetDirAbs: string, targetAbs: string): Promise<void> {
  if (st.isSymbolicLink()) {
    await replaceSymlink(targetDirAbs, targetAbs, await fs.promises.readlink(sourceAbs, { encoding: 'buffer' }));
    return;
  }
  if (!st.isFile()) return; // FIFOs, sockets and devices are not copied
  const handle = await fs.promises.open(sourceAbs, READ_FLAGS);
  let content: Buffer;
  try {
    if (!(await handle.stat()).isFile()) return; // swapped for a FIFO or device since the lstat
    content = await handle.readFile();
  } finally {
    await handle.close();
  }
  await replaceFile(targetDirAbs, targetAbs, content, st.mode & 0o7777);
}

/**
 * Creates `targetName` in `targetParent` and copies directory `sourceName` of `sourceParent` into it,
 * pinning each directory before reading or writing in it, so a directory swapped for a link meanwhile is
 * never followed.
 */
export async function copyDirectory(
  sourceParent: PinnedDir,
  sourceName: string,
  targetParent: PinnedDir,
  targetName: string,
  from: NormalizedPath,
  to: NormalizedPath,
): Promise<void> {
  await fs.promises.mkdir(targetParent.at(targetName));
  const source = pinChild(sourceParent, sourceName, from);
  try {
    const target = pinChild(targetParent, targetName, to);
    try {
      for (const dirent of await fs.promises.readdir(source.path, { withFileTypes: true })) {
        const name = dirent.name;
        if (!isVisibleName(name)) continue;
        const st = await fs.promises.lstat(source.at(name));
        if (st.isDirectory()) await copyDirectory(source, name, target, name, from, to);
        else await copyLeaf(source.at(name), st, target.path, target.at(name));
      }
    } finally {
      target.release();
    }
  } finally {
    source.release();
  }
}
