import * as fs from 'node:fs';
import { join } from 'node:path';
import { createOwnedTemp, removeOwnedTemp } from '../backends/host/owned-temp.js';
import type { StagingDirs } from './engine.js';

/** One run's staging directories, inside the area's directory. */
export type RunStaging = StagingDirs & { dir: string };

/**
 * Where runs stage their changes: one temp directory owned like every other (`sessionfs-exec-<owner>-…`),
 * made once, removed by {@link dispose}, at exit, or by the next process's sweep after a `kill -9` (the
 * mounts on it lived in the sandbox's mount namespace, which died with it, so nothing stays mounted). Each
 * run gets fresh directories inside it (a few `mkdir`s), and a finished run's are removed off the caller's
 * path, so neither making nor clearing a staging layer waits on a program's result.
 */
export class StagingArea {
  #dir: string | undefined;
  #runs = 0;
  readonly #removing = new Set<Promise<void>>();

  /** The area's directory (made on first use): every run's host paths are under it. */
  get dir(): string {
    this.#dir ??= createOwnedTemp('exec');
    return this.#dir;
  }

  create(): RunStaging {
    const dir = join(this.dir, `run-${++this.#runs}`);
    fs.mkdirSync(dir, { mode: 0o700 });
    const dirs = { dir, upper: join(dir, 'upper'), work: join(dir, 'work'), merged: join(dir, 'merged') };
    for (const sub of [dirs.upper, dirs.work, dirs.merged]) fs.mkdirSync(sub, { mode: 0o700 });
    // The sandbox's user is mapped to this process's user, so the merged root it sees is its own and writable.
    fs.chmodSync(dirs.upper, 0o755);
    return dirs;
  }

  /**
   * Removes a finished run's directories in the background, once its changes are applied. Only the sandbox
   * wrote there, and it has ended with its pid namespace (its overlay went with its mount namespace).
   */
  discard(staging: RunStaging): void {
    const removal = removeRun(staging).finally(() => this.#removing.delete(removal));
    this.#removing.add(removal);
  }

  /** Waits for the background removals (tests, benches). */
  async settled(): Promise<void> {
    await Promise.all([...this.#removing]);
  }

  dispose(): void {
    if (this.#dir === undefined) return;
    for (const run of listNames(this.#dir)) openWorkDir(join(this.#dir, run, 'work'));
    removeOwnedTemp(this.#dir);
    this.#dir = undefined;
  }
}

/** The overlay leaves its work directory unreadable (mode 000): opened up so a removal can list it. */
function openWorkDir(work: string): void {
  for (const name of listNames(work)) {
    try {
      fs.chmodSync(join(work, name), 0o700);
    } catch {
      // gone meanwhile
    }
  }
}

function listNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

async function removeRun(staging: RunStaging): Promise<void> {
  for (const name of await fs.promises.readdir(staging.work).catch(() => [])) {
    await fs.promises.chmod(join(staging.work, name), 0o700).catch(() => undefined);
  }
  // fs.rm unlinks a link it meets and never follows one; no program is left to swap an entry meanwhile.
  await fs.promises.rm(staging.dir, { recursive: true, force: true }).catch(() => undefined);
}
