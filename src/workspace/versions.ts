import { createHash } from 'node:crypto';
import type { BackendDriver, DriverBulkEntry, DriverStagedFile, DriverStat } from './driver.js';
import { driverWith } from './driver-proxy.js';
import { parentPath, type NormalizedPath } from './paths.js';

/**
 * A file version made of what identifies its state (stat fields, change stamps): a whole number below
 * 2^48, so it survives JSON and `Number.isSafeInteger`. Two different states share one with probability
 * 2^-48; the same state always gives the same number.
 */
export function versionHash(parts: readonly (number | string | bigint)[]): number {
  return createHash('sha256').update(parts.join(':')).digest().readUIntBE(0, 6);
}

/**
 * Which change last touched a path: a stamp from a clock that only goes forward, kept for a path and for
 * every directory a change named (a move of `d` re-stamps everything below it). What a change stamp adds to
 * stat fields is that two writes within one timestamp tick, even reusing an inode or a size, never share a
 * version.
 */
export class ChangeStamps {
  #clock = 0;
  readonly #stamps = new Map<string, number>();

  touch(...paths: readonly string[]): void {
    if (paths.length === 0) return;
    const stamp = ++this.#clock;
    for (const path of paths) this.#stamps.set(path, stamp);
  }

  /** The latest stamp of `path` or of a directory above it; 0 when none was touched. */
  latest(path: NormalizedPath): number {
    let latest = 0;
    for (let at = path; ; at = parentPath(at)) {
      latest = Math.max(latest, this.#stamps.get(at) ?? 0);
      if (at === '') return latest;
    }
  }
}

/**
 * `stat().version` for drivers that keep none (docs/text.md: every backend has versions). The shared layer wraps
 * such a driver: each change made through it (the protocol's, and the default snapshotter's restores, which
 * run through the same driver) stamps the paths it names, and a file's version is a hash of its latest
 * stamp, size and modification time. So it changes on every change made through this workspace and on any
 * change of size or time made behind its back; it does not see a same-size, same-time change made
 * elsewhere (the driver should keep versions of its own for that). Nothing is kept until the first stat
 * of a file without a version: before then no version was seen, so none can go stale.
 */
export function withFallbackVersions(driver: BackendDriver): BackendDriver {
  const stamps = new ChangeStamps();
  let active = false;
  const touch = (...paths: string[]): void => {
    if (active) stamps.touch(...paths);
  };
  const overrides: Partial<Record<keyof BackendDriver, unknown>> = {
    async stat(path: NormalizedPath): Promise<DriverStat> {
      const st = await driver.stat(path);
      if (!st.isFile || st.version !== undefined) return st;
      active = true;
      const real = driver.resolve === undefined ? path : await driver.resolve(path);
      return { ...st, version: versionHash([stamps.latest(real), st.sizeBytes, st.modifiedAt?.getTime() ?? '']) };
    },
    async writeFile(path: NormalizedPath, bytes: Uint8Array, options: Parameters<BackendDriver['writeFile']>[2]): Promise<void> {
      // A write through a link changes its target: the stamp goes where stat will look.
      const real = active && driver.resolve !== undefined ? await driver.resolve(path).catch(() => path) : path;
      try {
        await driver.writeFile(path, bytes, options);
      } finally {
        touch(real);
      }
    },
    async remove(path: NormalizedPath, options: { recursive: boolean }): Promise<void> {
      try {
        await driver.remove(path, options);
      } finally {
        touch(path);
      }
    },
  };
  const commitStaged = driver.commitStaged?.bind(driver);
  if (commitStaged !== undefined)
    overrides.commitStaged = (path: NormalizedPath, staged: DriverStagedFile, options: Parameters<BackendDriver['writeFile']>[2]) =>
      commitStaged(path, staged, options).finally(() => touch(path));
  if (driver.setExecutable !== undefined) {
    const setExecutable = driver.setExecutable.bind(driver);
    overrides.setExecutable = async (path: NormalizedPath, executable: boolean): Promise<void> => {
      const real = active && driver.resolve !== undefined ? await driver.resolve(path).catch(() => path) : path;
      await setExecutable(path, executable).finally(() => touch(real));
    };
  }
  if (driver.symlink !== undefined) {
    const symlink = driver.symlink.bind(driver);
    overrides.symlink = (target: string, path: NormalizedPath) => symlink(target, path).finally(() => touch(path));
  }
  if (driver.move !== undefined) {
    const move = driver.move.bind(driver);
    overrides.move = (from: NormalizedPath, to: NormalizedPath) => move(from, to).finally(() => touch(from, to));
  }
  if (driver.copy !== undefined) {
    const copy = driver.copy.bind(driver);
    overrides.copy = (from: NormalizedPath, to: NormalizedPath) => copy(from, to).finally(() => touch(to));
  }
  if (driver.writeFiles !== undefined) {
    const writeFiles = driver.writeFiles.bind(driver);
    overrides.writeFiles = (entries: readonly DriverBulkEntry[]) =>
      writeFiles(entries).finally(() => touch(...entries.map((entry) => entry.path)));
  }
  return driverWith(driver, overrides);
}
