import type { BackendDriver, DriverBulkEntry, DriverEntryKind, DriverStagedFile } from '../workspace/driver.js';
import { driverWith } from '../workspace/driver-proxy.js';
import { normalizePath, parentPath, type NormalizedPath } from '../workspace/paths.js';
import type { DiffEntry, RestoreResult } from '../workspace/types.js';
import type { WatchEvent, WatchOptions } from '../workspace/watch-event.js';
import { ChangeFeed } from './watch.js';

/**
 * A workspace's watchers, and the layer over its driver that feeds them: each mutation primitive reports
 * what it changed, worked out under the operation's path locks only while someone watches (otherwise a
 * primitive costs one check more). A restore (a rollback is one) reports what it changed: the files and
 * links that differed from the snapshot just before it ran.
 */
export class WatchLayer {
  readonly #feed = new ChangeFeed();
  /** The driver the workspace mutates through: `driver` with its mutations reporting to the watchers. */
  readonly driver: BackendDriver;

  constructor(driver: BackendDriver) {
    this.driver = watchedDriver(driver, this.#feed);
  }

  /** See {@link Workspace.watch}. */
  watch(options?: WatchOptions): AsyncIterableIterator<WatchEvent> {
    return this.#feed.watch(options);
  }

  /**
   * Runs a restore (one that does not go through {@link driver}: the snapshotter's own), reporting what it
   * changed when someone watches: `changes` (the diff against the snapshot, worked out before it runs)
   * inverted, but for what the restore skipped.
   */
  async restore(run: () => Promise<RestoreResult>, changes: () => Promise<DiffEntry[]>): Promise<RestoreResult> {
    if (!this.#feed.active) return run();
    const before = await changes().catch(() => undefined);
    const result = await run();
    const skipped = new Set(result.skipped.map((entry) => normalizePath(entry.path)));
    for (const change of before ?? []) {
      const path = normalizePath(change.path);
      if (!skipped.has(path))
        this.#feed.emit(change.status === 'added' ? 'deleted' : change.status === 'deleted' ? 'created' : 'modified', path);
    }
    return result;
  }

  /** Ends every watcher (the workspace was disposed). */
  close(): void {
    this.#feed.close();
  }
}

/** The driver with its mutations reporting to the feed; every other member forwarded (bound to the driver). */
function watchedDriver(driver: BackendDriver, feed: ChangeFeed): BackendDriver {
  /** A file stored at `path` (a write, or a write stream's commit): created or modified. */
  const stored = async (path: NormalizedPath, store: () => Promise<void>): Promise<void> => {
    const before = await driver.kind(path);
    await store();
    feed.emit(before === undefined ? 'created' : 'modified', path);
  };
  const overrides: Partial<Record<keyof BackendDriver, unknown>> = {
    writeFile: (path: NormalizedPath, bytes: Uint8Array, options: Parameters<BackendDriver['writeFile']>[2]) =>
      feed.active ? stored(path, () => driver.writeFile(path, bytes, options)) : driver.writeFile(path, bytes, options),
    mkdir: async (path: NormalizedPath) => {
      if (!feed.active) return driver.mkdir(path);
      const missing: NormalizedPath[] = [];
      for (let at = path; at !== '' && (await driver.kind(at)) === undefined; at = parentPath(at)) missing.unshift(at);
      await driver.mkdir(path);
      for (const created of missing) feed.emit('created', created);
    },
    remove: async (path: NormalizedPath, options: { recursive: boolean }) => {
      if (!feed.active) return driver.remove(path, options);
      const gone = await treeOf(driver, path);
      await driver.remove(path, options);
      for (const removed of gone.reverse()) feed.emit('deleted', removed);
    },
  };
  const transfer =
    (verb: 'move' | 'copy', run: (from: string, to: string) => Promise<void>) => async (from: NormalizedPath, to: NormalizedPath) => {
      if (!feed.active) return run(from, to);
      const source = await treeOf(driver, from);
      const replaced = new Set(await treeOf(driver, to));
      await run(from, to);
      const arrived = source.map((path) => (to + path.slice(from.length)) as NormalizedPath);
      if (verb === 'move') for (const removed of [...source].reverse()) feed.emit('deleted', removed);
      const kept = new Set(arrived);
      for (const removed of [...replaced].reverse()) if (!kept.has(removed)) feed.emit('deleted', removed);
      for (const path of arrived) feed.emit(replaced.has(path) ? 'modified' : 'created', path);
    };
  const commitStaged = driver.commitStaged?.bind(driver);
  if (commitStaged !== undefined)
    overrides.commitStaged = (path: NormalizedPath, staged: DriverStagedFile, options: Parameters<BackendDriver['writeFile']>[2]) =>
      feed.active ? stored(path, () => commitStaged(path, staged, options)) : commitStaged(path, staged, options);
  const writeFiles = driver.writeFiles?.bind(driver);
  if (writeFiles !== undefined)
    overrides.writeFiles = async (entries: readonly DriverBulkEntry[]) => {
      if (!feed.active) return writeFiles(entries);
      const changes = await bulkChanges(driver, entries);
      try {
        await writeFiles(entries);
      } catch (error) {
        // The driver stopped at a failing entry: what is there now may have changed (a file not reached yet is reported too).
        for (const [type, path] of changes) if ((await driver.kind(path).catch(() => undefined)) !== undefined) feed.emit(type, path);
        throw error;
      }
      for (const [type, path] of changes) feed.emit(type, path);
    };
  const setExecutable = driver.setExecutable?.bind(driver);
  if (setExecutable !== undefined)
    overrides.setExecutable = async (path: NormalizedPath, executable: boolean) => {
      await setExecutable(path, executable);
      if (feed.active) feed.emit('modified', path);
    };
  const symlink = driver.symlink?.bind(driver);
  if (symlink !== undefined)
    overrides.symlink = async (target: string, path: NormalizedPath) => {
      await symlink(target, path);
      if (feed.active) feed.emit('created', path);
    };
  if (driver.move !== undefined) overrides.move = transfer('move', driver.move.bind(driver));
  if (driver.copy !== undefined) overrides.copy = transfer('copy', driver.copy.bind(driver));

  return driverWith(driver, overrides);
}

/** The path and, for a directory, everything below it, each directory before what it holds; empty when absent. */
async function treeOf(driver: BackendDriver, path: NormalizedPath): Promise<NormalizedPath[]> {
  const kind: DriverEntryKind | undefined = await driver.kind(path);
  if (kind === undefined) return [];
  if (kind !== 'directory') return [path];
  const below: NormalizedPath[] = [];
  for await (const entry of driver.walk(path)) below.push(entry.path as NormalizedPath);
  return [path, ...below.sort()];
}

/**
 * What a bulk write will change, in order: for each entry its missing directories (outermost first), then
 * the file itself (created or modified), as the same writes made one by one report it.
 */
async function bulkChanges(
  driver: BackendDriver,
  entries: readonly DriverBulkEntry[],
): Promise<['created' | 'modified', NormalizedPath][]> {
  const present = new Map<NormalizedPath, boolean>();
  const exists = async (path: NormalizedPath): Promise<boolean> => {
    let known = present.get(path);
    if (known === undefined) present.set(path, (known = (await driver.kind(path)) !== undefined));
    return known;
  };
  const changes: ['created' | 'modified', NormalizedPath][] = [];
  for (const entry of entries) {
    const path = entry.path as NormalizedPath;
    const missing: NormalizedPath[] = [];
    for (let at = entry.kind === 'directory' ? path : parentPath(path); at !== '' && !(await exists(at)); at = parentPath(at))
      missing.unshift(at);
    for (const directory of missing) {
      present.set(directory, true);
      changes.push(['created', directory]);
    }
    if (entry.kind !== 'file') continue;
    changes.push([(await exists(path)) ? 'modified' : 'created', path]);
    present.set(path, true);
  }
  return changes;
}
