import type { Snapshotter, SnapshotTree } from '../../workspace/driver.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot } from '../../workspace/types.js';
import { HeldSnapshots } from '../../snapshots/held.js';
import { sortDiff } from '../../snapshots/record.js';
import { memorySnapshotTree } from './snapshot-tree.js';
import { diffTrees, type DirectoryNode } from './tree.js';

/** What a memory snapshotter works on: the driver's current tree, which a restore replaces. */
export interface TreeHolder {
  tree: DirectoryNode;
}

/**
 * Memory snapshots are O(1) in time and memory: a snapshot keeps a reference to the current root, and a
 * later write copies only the directories (and hash-trie nodes) on the path to the changed entry. Refs name
 * the instance, so a record taken elsewhere can never restore here.
 */
export class MemorySnapshotter implements Snapshotter {
  readonly #driver: TreeHolder;
  readonly #held = new HeldSnapshots<DirectoryNode>('memory');

  constructor(driver: TreeHolder) {
    this.#driver = driver;
  }

  /** Holds every snapshot `parent` holds (a fork's history); later snapshots of either stay apart. */
  inherit(parent: MemorySnapshotter): void {
    this.#held.inherit(parent.#held);
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    return this.#held.take(this.#driver.tree, options);
  }

  async restore(snapshot: WorkspaceSnapshot): Promise<RestoreResult> {
    this.#driver.tree = this.#treeOf(snapshot);
    return { skipped: [] };
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot): Promise<DiffEntry[]> {
    const before = this.#treeOf(from);
    const after = to === undefined ? this.#driver.tree : this.#treeOf(to);
    const entries: DiffEntry[] = [];
    diffTrees(before, after, (path, status) => entries.push({ path, status }));
    return sortDiff(entries);
  }

  async open(snapshot?: WorkspaceSnapshot): Promise<SnapshotTree> {
    return memorySnapshotTree(snapshot === undefined ? this.#driver.tree : this.#treeOf(snapshot));
  }

  async release(snapshots: readonly WorkspaceSnapshot[]): Promise<void> {
    this.#held.release(snapshots);
  }

  /** The workspace's old records restore nothing afterwards. */
  async dispose(): Promise<void> {
    this.#held.clear();
  }

  #treeOf(record: WorkspaceSnapshot): DirectoryNode {
    return this.#held.get(record);
  }
}
