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

  touched(...paths: NormalizedPath[]): void {
    for (const path of paths) this.dirty.add(path);
    this.stamps.touch(...paths);
  }

  mark(paths?: readonly string[]): void {
    if (paths === undefined) {
      this.fullScan = true;
      return;
    }
    if (!Array.isArray(paths)) throw new InvalidArgumentError('markChanged takes a list of paths');
    const normalized = paths.map((path) => normalizePath(path));
    for (const path of normalized) this.dirty.add(path);
    this.stamps.touch(...normalized);
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
