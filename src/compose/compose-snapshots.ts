import { HeldSnapshots } from '../snapshots/held.js';
import { sortDiff } from '../snapshots/record.js';
import type { Snapshotter, SnapshotTree } from '../workspace/driver.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';
import { composeTree } from './compose-tree.js';
import { releaseSnapshots } from '../workspace/snapshot-queue.js';
import { displayPath, joinPath, normalizePath, type NormalizedPath } from '../workspace/paths.js';
import type { DiffEntry, RestoreResult, SnapshotableWorkspace, SnapshotOptions, WorkspaceSnapshot } from '../workspace/types.js';
import { isSnapshotable, type Mount, type MountTable } from './mount-table.js';

/** Mount path → that mount's own record, for every mount that takes snapshots and is not disabled. */
type Taken = Map<NormalizedPath, WorkspaceSnapshot>;

/**
 * One snapshot record spanning every mount (`backend: 'compose'`): each mount that can snapshot is
 * snapshotted, and the composed record remembers their records. Restore rewrites `read-write` mounts only:
 * `read-only` and `disabled` mounts are never written, and `append-only` mounts keep what was appended (a
 * log survives a rollback). If one mount's restore fails, that mount and the mounts already restored are put
 * back as they were, so a restore changes all of them or none. Diff spans every snapshotted mount, paths as composed.
 *
 * A record belongs to the composed workspace that took it (as memory snapshots do). Releasing one (a
 * session's retention) releases each mount's record through that mount's own snapshotter, so a memory
 * mount forgets its tree and a host mount drops its ref (and prunes in due course).
 */
export class ComposeSnapshotter implements Snapshotter {
  readonly #table: MountTable;
  readonly #taken = new HeldSnapshots<Taken>('compose');

  constructor(table: MountTable) {
    this.#table = table;
  }

  #snapshotted(): (Mount & { workspace: SnapshotableWorkspace })[] {
    return this.#table.mounts.filter(
      (mount): mount is Mount & { workspace: SnapshotableWorkspace } => mount.access !== 'disabled' && isSnapshotable(mount.workspace),
    );
  }

  /**
   * Each mount's snapshot reports its own progress as part of this call (paths as composed) and stops on
   * its signal; the mounts snapshotted before an abort keep records nothing names (released at once).
   */
  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const call = LongCall.start(options, 'snapshot');
    const mounts = new Map<NormalizedPath, WorkspaceSnapshot>();
    try {
      for (const mount of this.#snapshotted()) {
        const part = call.part((inner) => outerPath(mount.path, inner));
        mounts.set(mount.path, await mount.workspace.snapshot(options.tag === undefined ? part : { tag: options.tag, ...part }));
      }
    } catch (error) {
      for (const mount of this.#snapshotted()) {
        const record = mounts.get(mount.path);
        if (record !== undefined) await releaseSnapshots(mount.workspace, [record]).catch(() => undefined);
      }
      throw error;
    }
    const summary = [...mounts].map(([path, record]) => ({ path: displayPath(path), backend: record.backend, ref: record.ref }));
    return { ...this.#taken.take(mounts, options), meta: { mounts: summary } };
  }

  /** The mounts' records; `SnapshotRestoreError` naming the record when it was released or taken elsewhere. */
  #recordOf(snapshot: WorkspaceSnapshot): Taken {
    return this.#taken.get(snapshot);
  }

  /**
   * Restores mount after mount, each reporting its progress as part of this call. An abort, like a failure,
   * stops at the next mount's next unit that may stop (see each backend's restore) and puts the mounts
   * already restored (and the one under way) back as they were: an aborted composed restore leaves every
   * mount exactly as before.
   */
  async restore(snapshot: WorkspaceSnapshot, options?: LongCallOptions): Promise<RestoreResult> {
    const call = LongCall.start(options, 'restore');
    const mounts = this.#recordOf(snapshot);
    const writable = this.#snapshotted().filter((mount) => mount.access === 'read-write');
    const taken: { mount: (typeof writable)[number]; before: WorkspaceSnapshot }[] = [];
    const skipped: RestoreResult['skipped'] = [];
    try {
      for (const mount of writable) {
        const target = mounts.get(mount.path);
        if (target === undefined) continue;
        const outer = (inner: string): string => outerPath(mount.path, inner);
        taken.push({ mount, before: await mount.workspace.snapshot(call.part(outer)) });
        const result = await mount.workspace.restore(target, call.part(outer));
        for (const entry of result.skipped) skipped.push({ ...entry, path: outer(entry.path) });
      }
    } catch (error) {
      // The mount that failed too: a restore can fail part way (a host root), and its snapshot was taken first.
      for (const { mount, before } of taken.reverse()) await mount.workspace.restore(before).catch(() => undefined);
      throw error;
    } finally {
      // The snapshots taken to undo a failed restore are not kept (nothing else can name them).
      for (const { mount, before } of taken) await releaseSnapshots(mount.workspace, [before]).catch(() => undefined);
    }
    return { skipped };
  }

  /** A path in a mount restore does not write: not `read-write` (read-only, append-only) or not snapshotted. */
  leftByRestore(path: string): string | undefined {
    const mount = this.#table.route(normalizePath(path))?.mount;
    if (mount === undefined || (mount.access === 'read-write' && isSnapshotable(mount.workspace))) return undefined;
    return `in the ${mount.access} mount ${displayPath(mount.path)}, which restores do not write`;
  }

  /** Forgets these records and releases each mount's record in that mount (records it did not take are ignored). */
  async release(snapshots: readonly WorkspaceSnapshot[]): Promise<void> {
    const byMount = new Map<NormalizedPath, WorkspaceSnapshot[]>();
    for (const snapshot of snapshots) {
      let mounts: Taken;
      try {
        mounts = this.#recordOf(snapshot);
      } catch {
        continue;
      }
      for (const [path, record] of mounts) byMount.set(path, [...(byMount.get(path) ?? []), record]);
    }
    this.#taken.release(snapshots);
    for (const mount of this.#table.mounts) {
      const records = byMount.get(mount.path);
      if (records !== undefined) await releaseSnapshots(mount.workspace, records);
    }
  }

  /** Records taken before restore nothing afterwards (the mounts themselves are disposed by the driver). */
  async dispose(): Promise<void> {
    this.#taken.clear();
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<DiffEntry[]> {
    const call = LongCall.start(options, 'diff');
    const left = this.#recordOf(from);
    const right = to === undefined ? undefined : this.#recordOf(to);
    const entries: DiffEntry[] = [];
    for (const mount of this.#snapshotted()) {
      const before = left.get(mount.path);
      if (before === undefined) continue;
      const after = right?.get(mount.path);
      const changes = await mount.workspace.diff(
        before,
        after,
        call.part((inner) => outerPath(mount.path, inner)),
      );
      for (const entry of changes) {
        const path = outerPath(mount.path, entry.path);
        // A path a nested mount point shadows is not part of what the composition shows.
        if (this.#table.route(normalizePath(path))?.mount === mount) entries.push({ ...entry, path });
      }
    }
    return sortDiff(entries);
  }

  /** What a snapshot (or, omitted, the live state) of every mount holds, as one tree for `patch` and `snapshotTree`. */
  async open(snapshot?: WorkspaceSnapshot, options?: LongCallOptions): Promise<SnapshotTree> {
    const call = LongCall.start(options, 'snapshotTree');
    const records = snapshot === undefined ? undefined : this.#recordOf(snapshot);
    const trees = new Map<NormalizedPath, SnapshotTree>();
    for (const mount of this.#snapshotted()) {
      const record = records?.get(mount.path);
      if (records !== undefined && record === undefined) continue;
      trees.set(
        mount.path,
        await mount.workspace.snapshotTree(
          record,
          call.part((inner) => outerPath(mount.path, inner)),
        ),
      );
    }
    return composeTree(this.#table, trees);
  }
}

function outerPath(mountPath: NormalizedPath, innerShown: string): string {
  const inner = normalizePath(innerShown);
  return displayPath(inner === '' ? mountPath : joinPath(mountPath, inner));
}
