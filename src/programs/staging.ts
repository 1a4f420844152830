import * as fs from 'node:fs';
import { join } from 'node:path';
import { createOwnedTemp, removeOwnedTemp } from '../backends/host/owned-temp.js';
import type { StagingDirs } from './engine.js';

/**
 * A run's staging directories, in one temp directory owned like every other (`sessionfs-exec-<owner>-…`):
 * removed after the run, at exit, or by the next process's sweep after a `kill -9` (the mounts on it lived
 * in the sandbox's mount namespace, which died with it, so nothing stays mounted).
 */
export function createStaging(): StagingDirs & { dir: string } {
  const dir = createOwnedTemp('exec');
  const dirs = { dir, upper: join(dir, 'upper'), work: join(dir, 'work'), merged: join(dir, 'merged'), lowerMount: join(dir, 'lower') };
  for (const sub of [dirs.upper, dirs.work, dirs.merged, dirs.lowerMount]) fs.mkdirSync(sub, { mode: 0o700 });
  // The sandbox's user is mapped to this process's user, so the merged root it sees is its own and writable.
  fs.chmodSync(dirs.upper, 0o755);
  return dirs;
}

export function removeStaging(staging: StagingDirs & { dir: string }): void {
  // The overlay leaves its work directory unreadable (mode 000): opened up first so the removal can list it.
  try {
    for (const name of fs.readdirSync(staging.work)) fs.chmodSync(join(staging.work, name), 0o700);
  } catch {
    // nothing there
  }
  removeOwnedTemp(staging.dir);
}
