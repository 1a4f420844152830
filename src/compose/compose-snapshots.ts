import { createHash, randomUUID } from 'node:crypto';
import { sortDiff } from '../snapshots/record.js';
import type { Snapshotter, SnapshotTree } from '../workspace/driver.js';
import { composeTree } from './compose-tree.js';
import { SnapshotRestoreError } from '../workspace/errors.js';
import { displayPath, joinPath, normalizePath, type NormalizedPath } from '../workspace/paths.js';
import type { DiffEntry, RestoreResult, SnapshotableWorkspace, SnapshotOptions, WorkspaceSnapshot } from '../workspace/types.js';
import { isSnapshotable, type Mount, type MountTable } from './mount-table.js';

interface Taken {
  ref: string;
  /** Mount path → that mount's own record, for every mount that takes snapshots and is not disabled. */
  mounts: Map<NormalizedPath, WorkspaceSnapshot>;
}

/**
 * One snapshot record spanning every mount (`backend: 'compose'`): each mount that can snapshot is
 * snapshotted, and the composed record remembers their records. Restore rewrites `read-write` mounts only:
 * `read-only` and `disabled` mounts are never written, and `append-only` mounts keep what was appended (a
 * log survives a rollback). If one mount's restore fails, the mounts already restored are put back as they
 * were, so a restore changes all of them or none. Diff spans every snapshotted mount, paths as composed.
 *
 * A record belongs to the composed workspace that took it (as memory snapshots do).
 */
export class ComposeSnapshotter implements Snapshotter {
  readonly #table: MountTable;
  readonly #taken = new Map<string, Taken>();

  constructor(table: MountTable) {
    this.#table = table;
  }

  #snapshotted(): (Mount & { workspace: SnapshotableWorkspace })[] {
    return this.#table.mounts.filter(
      (mount): mount is Mount & { workspace: SnapshotableWorkspace } => mount.access !== 'disabled' && isSnapshotable(mount.workspace),
    );
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const mounts = new Map<NormalizedPath, WorkspaceSnapshot>();
    for (const mount of this.#snapshotted()) {
      mounts.set(mount.path, await mount.workspace.snapshot(options.tag === undefined ? {} : { tag: options.tag }));
    }
    const id = randomUUID();
    const summary = [...mounts].map(([path, record]) => ({ path: displayPath(path), backend: record.backend, ref: record.ref }));
    const ref = `compose:${createHash('sha256')
      .update(JSON.stringify([id, summary]))
      .digest('hex')}`;
    this.#taken.set(id, { ref, mounts });
    const record: WorkspaceSnapshot = {
      id,
      backend: 'compose',
      ref,
      createdAt: new Date().toISOString(),
      root: '/',
      meta: { mounts: summary },
    };
    if (options.tag !== undefined) record.tag = options.tag;
    return record;
  }

  #recordOf(snapshot: WorkspaceSnapshot): Taken {
    const taken = this.#taken.get(snapshot.id);
    if (taken === undefined || taken.ref !== snapshot.ref || snapshot.backend !== 'compose')
      throw new SnapshotRestoreError('not a snapshot this composed workspace took');
    return taken;
  }

  async restore(snapshot: WorkspaceSnapshot): Promise<RestoreResult> {
    const { mounts } = this.#recordOf(snapshot);
    const writable = this.#snapshotted().filter((mount) => mount.access === 'read-write');
    const restored: { mount: (typeof writable)[number]; before: WorkspaceSnapshot }[] = [];
    const skipped: RestoreResult['skipped'] = [];
    try {
      for (const mount of writable) {
        const target = mounts.get(mount.path);
        if (target === undefined) continue;
        const before = await mount.workspace.snapshot();
        const result = await mount.workspace.restore(target);
        restored.push({ mount, before });
        for (const entry of result.skipped) skipped.push({ ...entry, path: outerPath(mount.path, entry.path) });
      }
    } catch (error) {
      for (const { mount, before } of restored.reverse()) await mount.workspace.restore(before).catch(() => undefined);
      throw error;
    }
    return { skipped };
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot): Promise<DiffEntry[]> {
    const left = this.#recordOf(from).mounts;
    const right = to === undefined ? undefined : this.#recordOf(to).mounts;
    const entries: DiffEntry[] = [];
    for (const mount of this.#snapshotted()) {
      const before = left.get(mount.path);
      if (before === undefined) continue;
      const after = right?.get(mount.path);
      const changes = await mount.workspace.diff(before, after);
      for (const entry of changes) {
        const path = outerPath(mount.path, entry.path);
        // A path a nested mount point shadows is not part of what the composition shows.
        if (this.#table.route(normalizePath(path))?.mount === mount) entries.push({ ...entry, path });
      }
    }
    return sortDiff(entries);
  }

  /** What a snapshot (or, omitted, the live state) of every mount holds, as one tree for `patch` and `snapshotTree`. */
  async open(snapshot?: WorkspaceSnapshot): Promise<SnapshotTree> {
    const records = snapshot === undefined ? undefined : this.#recordOf(snapshot).mounts;
    const trees = new Map<NormalizedPath, SnapshotTree>();
    for (const mount of this.#snapshotted()) {
      const record = records?.get(mount.path);
      if (records !== undefined && record === undefined) continue;
      trees.set(mount.path, await mount.workspace.snapshotTree(record));
    }
    return composeTree(this.#table, trees);
  }
}

function outerPath(mountPath: NormalizedPath, innerShown: string): string {
  const inner = normalizePath(innerShown);
  return displayPath(inner === '' ? mountPath : joinPath(mountPath, inner));
}
