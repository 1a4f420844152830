import type { Governance } from '../governance/governance.js';
import { parseSnapshotRecord } from '../snapshots/record.js';
import type { Snapshotter, SnapshotTree } from './driver.js';
import { InvalidArgumentError, SnapshotError } from './errors.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot } from './types.js';

/**
 * A workspace's snapshot calls: records validated (zod) before the snapshotter sees them, run one at a time
 * (snapshot, restore, diff and tree reads never interleave), and seen through the policy (denied paths are
 * absent from diffs and trees).
 */
export class SnapshotQueue {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly snapshots: Snapshotter,
    private readonly governance: Governance,
    private readonly backend: string,
  ) {}

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const tag = options?.tag;
    if (tag !== undefined && typeof tag !== 'string') throw new InvalidArgumentError('tag must be a string');
    return this.#exclusive(() => this.snapshots.snapshot(tag === undefined ? {} : { tag }));
  }

  async restore(snapshot: WorkspaceSnapshot): Promise<RestoreResult> {
    const record = parseSnapshotRecord(snapshot);
    return this.#exclusive(() => this.snapshots.restore(record).finally(() => this.governance.restored()));
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot): Promise<DiffEntry[]> {
    const left = parseSnapshotRecord(from);
    const right = to === undefined ? undefined : parseSnapshotRecord(to);
    return this.governance.filterDiff(await this.#exclusive(() => this.snapshots.diff(left, right)));
  }

  /** A `SnapshotError` when the backend's snapshotter cannot be read as a tree (it has no `open`). */
  async tree(snapshot?: WorkspaceSnapshot): Promise<SnapshotTree> {
    const record = snapshot === undefined ? undefined : parseSnapshotRecord(snapshot);
    const snapshots = this.snapshots;
    if (snapshots.open === undefined) throw new SnapshotError(`the ${this.backend} backend's snapshots cannot be read as a tree`);
    const tree = await this.#exclusive(() => (snapshots.open as NonNullable<Snapshotter['open']>).call(snapshots, record));
    return this.governance.filterTree(tree);
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

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
