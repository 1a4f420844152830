import * as fs from 'node:fs';
import { isStaleTempName } from './atomic.js';
import { isTempName, isVisibleName } from '../../host-files/names.js';
import { pinChildAsync, pinDirectoryAsync, type PinnedDir, type Sandbox } from '../../host-files/sandbox.js';

/**
 * Removes, anywhere under a host root, the temp files of atomic writes whose writer was killed mid-write
 * (`kill -9`: no cleanup ran): names `.sessionfs-tmp-<pid>.<start>.<host>-<16 hex>` whose owner process,
 * on this host, no longer runs (a reused pid has another start time, so it does not count as the owner).
 * A live writer's temp file (another process's, or this one's) is never touched, nor is one of another
 * host, nor an owner-less name of the older shape.
 *
 * It never follows a link: every directory is pinned by descriptor before it is listed (a link standing in
 * a directory's place is refused, not entered), and a stale name is unlinked through its directory's pin,
 * so no directory swapped for a link meanwhile can lead the removal outside the root. Removing a file is one
 * `unlink` (atomic), and nothing alive can recreate a dead owner's name, so no claim is needed (the temp
 * directory sweeper claims by rename because removing a tree takes many steps). Two sweepers racing remove
 * each file once. Directories are walked one at a time (descriptors held: the depth), `stopped()` is checked
 * between entries, and any failure ends that directory's part quietly: a sweep is best effort.
 *
 * Returns the workspace paths removed.
 */
export async function sweepStaleTempFiles(sandbox: Sandbox, stopped: () => boolean = () => false): Promise<string[]> {
  const removed: string[] = [];
  let root: PinnedDir;
  try {
    root = await pinDirectoryAsync(sandbox, '', '');
  } catch {
    return removed;
  }
  await sweepDirectory(root, '', removed, stopped);
  return removed;
}

/**
 * Removes the stale temp files directly in each of `dirs` (workspace paths; no subdirectory is entered):
 * what a restore does for the directories it wrote into and those its scan saw temp names in, so that
 * no killed writer's temp file outlives the restore without a walk of the whole root. Same rules as
 * {@link sweepStaleTempFiles}; a directory that is gone or not a real directory any more is skipped.
 */
export async function sweepStaleTempFilesIn(sandbox: Sandbox, dirs: Iterable<string>): Promise<string[]> {
  const removed: string[] = [];
  for (const rel of new Set(dirs)) {
    let dir: PinnedDir;
    try {
      dir = await pinDirectoryAsync(sandbox, rel, rel);
    } catch {
      continue;
    }
    try {
      for (const dirent of await fs.promises.readdir(dir.path, { withFileTypes: true })) await removeIfStale(dir, rel, dirent, removed);
    } catch {
      // listed while removed or replaced: nothing more to do here
    } finally {
      dir.release();
    }
  }
  return removed;
}

/** Unlinks `dirent` when it is a stale temp file; returns whether it has a temp name (removed or not). */
async function removeIfStale(dir: PinnedDir, rel: string, dirent: fs.Dirent, removed: string[]): Promise<boolean> {
  const name = dirent.name;
  if (!isTempName(name)) return false;
  // A directory with a temp name is nobody's write: left alone (unlink would refuse it anyway).
  if (!dirent.isDirectory() && isStaleTempName(name)) {
    const gone = await fs.promises.unlink(dir.at(name)).then(
      () => true,
      () => false,
    );
    if (gone) removed.push(rel === '' ? name : `${rel}/${name}`);
  }
  return true;
}

/** Sweeps `dir` (then releases it) and its real subdirectories. */
async function sweepDirectory(dir: PinnedDir, rel: string, removed: string[], stopped: () => boolean): Promise<void> {
  try {
    for (const dirent of await fs.promises.readdir(dir.path, { withFileTypes: true })) {
      if (stopped()) return;
      const name = dirent.name;
      const path = rel === '' ? name : `${rel}/${name}`;
      if (await removeIfStale(dir, rel, dirent, removed)) continue;
      if (!isVisibleName(name) || !(await isDirectory(dir, dirent))) continue;
      let child: PinnedDir;
      try {
        child = await pinChildAsync(dir, name, path);
      } catch {
        continue; // gone, or a link now stands there
      }
      await sweepDirectory(child, path, removed, stopped);
    }
  } catch {
    // listed while removed or replaced: nothing more to do here
  } finally {
    dir.release();
  }
}

/** Whether an entry is a real directory (a filesystem that does not say in the listing is asked). */
async function isDirectory(dir: PinnedDir, dirent: fs.Dirent): Promise<boolean> {
  if (dirent.isDirectory()) return true;
  if (dirent.isFile() || dirent.isSymbolicLink()) return false;
  const stat = await fs.promises.lstat(dir.at(dirent.name)).catch(() => undefined);
  return stat?.isDirectory() ?? false;
}
