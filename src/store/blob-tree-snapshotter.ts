import { randomUUID } from 'node:crypto';
import type { BlobStore, Snapshotter, SnapshotTree } from '../workspace/driver.js';
import { SnapshotRestoreError } from '../workspace/errors.js';
import { diffManifests, manifestReader } from '../snapshots/manifest.js';
import { snapshotTree, type TreeReader } from '../snapshots/snapshot-tree.js';
import { sortDiff } from '../snapshots/record.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot } from '../workspace/types.js';

/** What the snapshots need of a blob tree: its blobs, and capturing or replacing its root manifest. */
export interface CapturingTree {
  readonly name: string;
  readonly blobs: BlobStore;
  capture(): Promise<{ root: string }>;
  replaceRoot(root: string): Promise<void>;
}

const REF_PREFIX = 'sha256:';

/**
 * The snapshot record of the tree a root manifest names, as a `BlobTreeDriver`'s snapshots are: any
 * workspace over the blob store holding it can read it (e.g. a stored session's base, as a `from`).
 */
export function blobTreeSnapshot(root: string, tag?: string, backend = 'memory'): WorkspaceSnapshot {
  const record: WorkspaceSnapshot = {
    id: randomUUID(),
    backend,
    ref: `${REF_PREFIX}${root}`,
    createdAt: new Date().toISOString(),
    root: '/',
  };
  if (tag !== undefined) record.tag = tag;
  return record;
}

/** Snapshots of a blob tree: records carry the root manifest hash, valid wherever the blobs are. */
export class BlobTreeSnapshotter implements Snapshotter {
  readonly #tree: CapturingTree;
  /** One reader for every tree this workspace opens, so `patch` and diffs skip unchanged directories by hash. */
  readonly #reader: TreeReader<string>;

  constructor(tree: CapturingTree) {
    this.#tree = tree;
    this.#reader = manifestReader(tree.blobs);
  }

  /** A snapshot's tree, or the live state's (captured into the blob store first): what `patch` reads. */
  async open(snapshot?: WorkspaceSnapshot): Promise<SnapshotTree> {
    const root = snapshot === undefined ? (await this.#tree.capture()).root : this.#rootOf(snapshot);
    return snapshotTree(root, this.#reader);
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const { root } = await this.#tree.capture();
    return blobTreeSnapshot(root, options.tag, this.#tree.name);
  }

  async restore(snapshot: WorkspaceSnapshot): Promise<RestoreResult> {
    await this.#tree.replaceRoot(this.#rootOf(snapshot));
    return { skipped: [] };
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot): Promise<DiffEntry[]> {
    const right = to === undefined ? (await this.#tree.capture()).root : this.#rootOf(to);
    const entries: DiffEntry[] = [];
    await diffManifests(this.#tree.blobs, '', this.#rootOf(from), right, entries);
    return sortDiff(entries);
  }

  #rootOf(record: WorkspaceSnapshot): string {
    if (record.backend !== this.#tree.name || !record.ref.startsWith(REF_PREFIX))
      throw new SnapshotRestoreError(`snapshot ${record.id} is not a content-addressed ${this.#tree.name} snapshot`);
    const root = record.ref.slice(REF_PREFIX.length);
    if (!/^[0-9a-f]{64}$/.test(root)) throw new SnapshotRestoreError(`snapshot ${record.id} has a malformed ref`);
    return root;
  }
}
