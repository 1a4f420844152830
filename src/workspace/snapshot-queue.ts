import type { Governance } from '../governance/governance.js';
import { parseSnapshotRecord } from '../snapshots/record.js';
import { restoreLeaving, restoreOnly, type LeftAlone } from '../snapshots/protected-restore.js';
import { createGitPatch } from '../snapshots/patch.js';
import type { BackendDriver, Snapshotter, SnapshotTree } from './driver.js';
import { previewRestore } from '../snapshots/restore-preview.js';
import { treeHash } from '../snapshots/tree-hash.js';
import { InvalidArgumentError, NotSupportedError, SnapshotError } from './errors.js';
import type { NormalizedPath } from './paths.js';
import { LongCall, type LongCallOptions } from './progress.js';
import type { DiffEntry, RestoreReceipt, RestorePreview, RestoreResult, SnapshotOptions, WorkspaceSnapshot } from './types.js';

/**
 * How a session lets go of snapshots it no longer keeps (`retention`), without a protocol method that every
 * workspace implementation (views, compositions, users' own) would have to grow: a workspace built on the
 * driver API names itself as its queue's owner, and `releaseSnapshots` finds the queue. For any other
 * workspace releasing does nothing (the records just leave the session's lists).
 */
const queues = new WeakMap<object, SnapshotQueue>();

/** Frees what only these records hold in `workspace`, when its backend can (see `Snapshotter.release`). */
export async function releaseSnapshots(workspace: object, records: readonly WorkspaceSnapshot[]): Promise<void> {
  await queues.get(workspace)?.release(records);
}

/**
 * A workspace's snapshot calls: records validated (zod) before the snapshotter sees them, run one at a time
 * (snapshot, restore, diff and tree reads never interleave), and seen through the policy (denied paths are
 * absent from diffs and trees). Each long call's `signal` and `onProgress` are handled here once, for every
 * backend (see `LongCall`): checked before the call and when its turn in the queue comes, forwarded to the
 * snapshotter (which may report progress and stop between units), and closed with the final event.
 */
export class SnapshotQueue {
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * `owner`: the workspace whose snapshots `releaseSnapshots` then releases through this queue. `protect`:
   * what restores leave alone, and the driver that puts it back when the snapshotter cannot skip it.
   */
  constructor(
    private readonly snapshots: Snapshotter,
    private readonly governance: Governance,
    private readonly backend: string,
    owner?: object,
    private readonly protect?: { driver: BackendDriver; left: LeftAlone; active: boolean },
  ) {
    if (owner !== undefined) queues.set(owner, this);
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const tag = options?.tag;
    if (tag !== undefined && typeof tag !== 'string') throw new InvalidArgumentError('tag must be a string');
    const call = LongCall.start(options, 'snapshot');
    return this.#exclusive(call, () => this.snapshots.snapshot(tag === undefined ? call.forward : { tag, ...call.forward }));
  }

  /** The restore, then its receipt (see `RestoreReceipt`). */
  async restore(snapshot: WorkspaceSnapshot, options?: LongCallOptions): Promise<RestoreResult> {
    const record = parseSnapshotRecord(snapshot);
    const call = LongCall.start(options, 'restore');
    const protect = this.protect?.active === true ? this.protect : undefined;
    const run = () =>
      protect === undefined
        ? this.snapshots.restore(record, call.forward)
        : restoreLeaving(this.snapshots, protect.driver, record, protect.left, call.forward);
    return this.#exclusive(call, async () => {
      const result = await run().finally(() => this.governance.restored());
      const receipt = await this.#receipt(record);
      return receipt === undefined ? result : { ...result, receipt };
    });
  }

  /** The tree the restore left, hashed and compared with the snapshot's; none when the snapshots cannot be read as trees. */
  async #receipt(record: WorkspaceSnapshot): Promise<RestoreReceipt | undefined> {
    if (this.snapshots.open === undefined) return undefined;
    const [live, target] = [await this.snapshots.open(), await this.snapshots.open(record)];
    const [treeHashAfter, snapshotTreeHash] = [await treeHash(live), await treeHash(target)];
    return { treeHash: treeHashAfter, snapshotTreeHash, matches: treeHashAfter === snapshotTreeHash };
  }

  /**
   * What `restore` would do, changing nothing: `blockedBy` adds the workspace's own reasons to leave a path
   * (read-only); the `protect` rule's and the snapshotter's (`leftByRestore`) are asked here. Paths the
   * policy hides are not shown.
   */
  async preview(
    snapshot: WorkspaceSnapshot,
    options: LongCallOptions | undefined,
    blockedBy: (path: string) => string | undefined,
  ): Promise<RestoreResult> {
    const record = parseSnapshotRecord(snapshot);
    const call = LongCall.start(options, 'restore');
    const snapshots = this.snapshots;
    const left = this.protect?.active === true ? this.protect.left : undefined;
    const reason = (path: string, exists: boolean): string | undefined =>
      blockedBy(path) ??
      snapshots.leftByRestore?.(path) ??
      (left?.leavesAlone(path as NormalizedPath, exists) === true ? left.reason(left.rootOf(path as NormalizedPath)) : undefined);
    const preview = await this.#exclusive(call, async () => {
      if (snapshots.open === undefined) throw new NotSupportedError(`the ${this.backend} backend cannot preview a restore`);
      return previewRestore(await snapshots.open(undefined, call.forward), await snapshots.open(record, call.forward), reason);
    });
    const shown = (paths: string[], status: DiffEntry['status']): string[] =>
      this.governance.filterDiff(paths.map((path) => ({ path, status }))).map((entry) => entry.path);
    const visible = new Set(
      shown(
        preview.blocked.map((entry) => entry.path),
        'modified',
      ),
    );
    const filtered: RestorePreview = {
      created: shown(preview.created, 'added'),
      modified: shown(preview.modified, 'modified'),
      deleted: shown(preview.deleted, 'deleted'),
      blocked: preview.blocked.filter((entry) => visible.has(entry.path)),
    };
    return { skipped: filtered.blocked, preview: filtered };
  }

  /** Puts only `roots` back as the snapshot holds them (see `WorkspaceTrust.restoreOnly`). */
  async restoreOnly(snapshot: WorkspaceSnapshot, roots: readonly string[], driver: BackendDriver): Promise<void> {
    const record = parseSnapshotRecord(snapshot);
    const call = LongCall.start(undefined, 'restore');
    await this.#exclusive(call, () => restoreOnly(this.snapshots, driver, record, roots).finally(() => this.governance.restored()));
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<DiffEntry[]> {
    const left = parseSnapshotRecord(from);
    const right = to === undefined ? undefined : parseSnapshotRecord(to);
    const call = LongCall.start(options, 'diff');
    return this.governance.filterDiff(await this.#exclusive(call, () => this.snapshots.diff(left, right, call.forward)));
  }

  /** A `SnapshotError` when the backend's snapshotter cannot be read as a tree (it has no `open`). */
  async tree(snapshot?: WorkspaceSnapshot, options?: LongCallOptions): Promise<SnapshotTree> {
    const record = snapshot === undefined ? undefined : parseSnapshotRecord(snapshot);
    const call = LongCall.start(options, 'snapshotTree');
    const snapshots = this.snapshots;
    const tree = await this.#exclusive(call, () => {
      if (snapshots.open === undefined) throw new SnapshotError(`the ${this.backend} backend's snapshots cannot be read as a tree`);
      return snapshots.open(record, call.forward);
    });
    return this.governance.filterTree(tree);
  }

  /** The git patch from `from` to `to` (the live state when omitted); see src/snapshots/patch.ts. */
  async patch(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<string> {
    const call = LongCall.start(options, 'patch');
    return call.run(async () => {
      const before = await this.tree(from, { signal: call.forward.signal });
      const after = await this.tree(to, { signal: call.forward.signal });
      return createGitPatch(before, after, call.forward);
    });
  }

  /** Lets the snapshotter forget these records and free their storage (after the calls under way). */
  async release(records: readonly WorkspaceSnapshot[]): Promise<void> {
    const snapshots = this.snapshots;
    if (snapshots.release === undefined || records.length === 0) return;
    const release = snapshots.release.bind(snapshots);
    await this.#exclusive(LongCall.start(undefined, 'release'), () => release(records));
  }

  /** Told after every mutation which paths it touched. */
  changed(paths: readonly string[]): void {
    this.snapshots.changed?.(paths);
  }

  /** Waits for the calls under way, then releases the snapshotter. */
  async dispose(): Promise<void> {
    await this.#queue;
    await this.snapshots.dispose?.();
  }

  /** Runs `task` after the calls queued before it, unless the call was aborted meanwhile. */
  #exclusive<T>(call: LongCall, task: () => Promise<T>): Promise<T> {
    const turn = (): Promise<T> =>
      call.run(async () => {
        call.check();
        return task();
      });
    const run = this.#queue.then(turn, turn);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
