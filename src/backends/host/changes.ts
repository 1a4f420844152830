import type * as fs from 'node:fs';
import { normalizePath, type NormalizedPath } from '../../workspace/paths.js';
import { InvalidArgumentError } from '../../workspace/errors.js';
import { ChangeStamps, versionHash } from '../../workspace/versions.js';

/**
 * What changed in a host root since the last snapshot, as far as the workspace knows: the real paths its
 * own primitives touched, plus whatever `markChanged` names. `fullScan` asks the next snapshot to look at
 * everything (set at the start, by `markChanged()` without paths and by `exec`). `stamps` remembers which
 * change last touched each path, for file versions (see `hostFileVersion`).
 */
export class ChangeTracker {
  dirty = new Set<string>();
  fullScan = true;
  readonly stamps = new ChangeStamps();
  /** The sets of the scans under way (see `watch`). */
  readonly #watchers = new Set<Set<string>>();
  /** The driver's changes under way (see `during`). */
  readonly #running = new Set<Promise<unknown>>();

  touched(...paths: NormalizedPath[]): void {
    for (const path of paths) this.dirty.add(path);
    for (const watcher of this.#watchers) for (const path of paths) watcher.add(path);
    this.stamps.touch(...paths);
  }

  /**
   * Runs one of the driver's changes, known to be under way until it ends: its system calls may land while
   * a scan runs, and it reports the paths it touched only when it ends (see `settled`).
   */
  during<T>(change: () => Promise<T>): Promise<T> {
    const running = change();
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    this.#running.add(settled);
    void settled.then(() => this.#running.delete(settled));
    return running;
  }

  /** Resolves once every change under way now has ended (and reported what it touched). */
  async settled(): Promise<void> {
    await Promise.all([...this.#running]);
  }

  /**
   * Collects the paths touched from now on, for a scan under way: it gives the event loop a turn between
   * slices, so this workspace's own changes run meanwhile, and a path it listed before a change and one it
   * lists after may disagree (a file moved out of a directory not scanned yet into one already listed was
   * in neither). `take` hands over what was touched since the last `take`; `stop` ends the collection.
   */
  watch(): { take(): Set<string>; stop(): void } {
    let touched = new Set<string>();
    this.#watchers.add(touched);
    return {
      take: () => {
        const taken = touched;
        this.#watchers.delete(taken);
        touched = new Set();
        this.#watchers.add(touched);
        return taken;
      },
      stop: () => {
        this.#watchers.delete(touched);
      },
    };
  }

  mark(paths?: readonly string[]): void {
    if (paths === undefined) {
      this.fullScan = true;
      return;
    }
    if (!Array.isArray(paths)) throw new InvalidArgumentError('markChanged takes a list of paths');
    const normalized = paths.map((path) => normalizePath(path));
    this.touched(...normalized);
  }

  /** Hands over what is pending and starts afresh. */
  take(): { dirty: Set<string>; fullScan: boolean } {
    const taken = { dirty: this.dirty, fullScan: this.fullScan };
    this.dirty = new Set();
    this.fullScan = false;
    return taken;
  }

  /** Puts back what a failed snapshot took, and asks for a full scan. */
  giveBack(dirty: Iterable<string>): void {
    for (const path of dirty) this.dirty.add(path);
    this.fullScan = true;
  }
}

/**
 * A host file's `stat().version`: a hash of what changes with every change of a file on disk (device and
 * inode, which a replacing rename changes; size; modification and status-change times, in the finest unit
 * the stat gives) and of the workspace's last change stamp of its path. The stamp tells apart two writes
 * in one timestamp tick that reuse an inode and a size; the stat fields catch changes made behind the
 * workspace's back once they are on disk. Like git's index, an outside change keeping the inode, the size
 * and both times within one tick goes unseen.
 */
export function hostFileVersion(st: fs.Stats, stamp: number): number {
  return versionHash([st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs, stamp]);
}
