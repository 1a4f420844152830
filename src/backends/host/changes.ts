import { normalizePath, type NormalizedPath } from '../../workspace/paths.js';
import { InvalidArgumentError } from '../../workspace/errors.js';

/**
 * What changed in a host root since the last snapshot, as far as the workspace knows: the real paths its
 * own primitives touched, plus whatever `markChanged` names. `fullScan` asks the next snapshot to look at
 * everything (set at the start, by `markChanged()` without paths and by `exec`).
 */
export class ChangeTracker {
  dirty = new Set<string>();
  fullScan = true;

  touched(...paths: NormalizedPath[]): void {
    for (const path of paths) this.dirty.add(path);
  }

  mark(paths?: readonly string[]): void {
    if (paths === undefined) {
      this.fullScan = true;
      return;
    }
    if (!Array.isArray(paths)) throw new InvalidArgumentError('markChanged takes a list of paths');
    for (const path of paths) this.dirty.add(normalizePath(path));
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
