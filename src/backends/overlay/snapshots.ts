import { copyBytes } from '../../workspace/bytes.js';
import type { Snapshotter, SnapshotTree } from '../../workspace/driver.js';
import { HeldSnapshots } from '../../snapshots/held.js';
import { joinPath, type NormalizedPath } from '../../workspace/paths.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot } from '../../workspace/types.js';
import { changedPaths, snapshotTree, type TreeChild, type TreeReader } from '../../snapshots/snapshot-tree.js';
import { lowerExecutable, type LowerLayer } from './lower.js';
import type { UpperDirectory } from './upper.js';
import { MergedEntry, mergedChild, mergedChildren } from './view.js';

/**
 * Overlay snapshots are O(1): a snapshot keeps a reference to the upper root (the lower directory is never
 * written, and a lower file that changes on disk after it was read raises `ConflictError` rather than
 * showing through). Restore swaps the root back; diff walks only what differs between two upper roots.
 * Refs name the instance, so a record taken elsewhere can never restore here.
 */
/** What the snapshotter reads and swaps: the overlay driver's layers. */
export interface OverlayLayers {
  readonly lower: LowerLayer;
  upper: UpperDirectory;
}

export class OverlaySnapshotter implements Snapshotter {
  readonly #driver: OverlayLayers;
  readonly #held = new HeldSnapshots<UpperDirectory>('overlay');
  readonly #reader: TreeReader<Directory>;

  constructor(driver: OverlayLayers) {
    this.#driver = driver;
    this.#reader = overlayReader(driver.lower);
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    return this.#held.take(this.#driver.upper, options);
  }

  async restore(snapshot: WorkspaceSnapshot): Promise<RestoreResult> {
    this.#driver.upper = this.#upperOf(snapshot);
    return { skipped: [] };
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot): Promise<DiffEntry[]> {
    const before = this.#tree(this.#upperOf(from));
    const after = this.#tree(to === undefined ? this.#driver.upper : this.#upperOf(to));
    const out: DiffEntry[] = [];
    for (const change of await changedPaths(before, after)) {
      if (change.status === 'modified' && (await sameContent(before, after, change.path))) continue;
      out.push({ path: change.path, status: change.status });
    }
    return out;
  }

  async open(snapshot?: WorkspaceSnapshot): Promise<SnapshotTree> {
    return this.#tree(snapshot === undefined ? this.#driver.upper : this.#upperOf(snapshot));
  }

  async release(snapshots: readonly WorkspaceSnapshot[]): Promise<void> {
    this.#held.release(snapshots);
  }

  async dispose(): Promise<void> {
    this.#held.clear();
  }

  #tree(upper: UpperDirectory): SnapshotTree {
    return snapshotTree(directoryOf(upper, '', !upper.opaque), this.#reader);
  }

  #upperOf(record: WorkspaceSnapshot): UpperDirectory {
    return this.#held.get(record);
  }
}

/**
 * A directory of the merged tree as the snapshot trees see it. A directory the upper layer holds nothing of
 * is its path (a string: equal in every snapshot, so comparing two snapshots skips it unread); one the upper
 * layer holds is one interned object per upper node, path and see-through flag, so an unchanged upper
 * directory is the same object in two snapshots and is skipped too.
 */
type Directory = NormalizedPath | UpperDirectoryAt;

interface UpperDirectoryAt {
  readonly path: NormalizedPath;
  readonly upper: UpperDirectory;
  readonly through: boolean;
}

const interned = new WeakMap<UpperDirectory, Map<string, UpperDirectoryAt>>();

function directoryOf(upper: UpperDirectory, path: NormalizedPath, through: boolean): UpperDirectoryAt {
  let byPlace = interned.get(upper);
  if (byPlace === undefined) {
    byPlace = new Map();
    interned.set(upper, byPlace);
  }
  const key = `${through ? 1 : 0}${path}`;
  let found = byPlace.get(key);
  if (found === undefined) {
    found = { path, upper, through };
    byPlace.set(key, found);
  }
  return found;
}

/** Reads merged directories; a lower leaf's identity is its path (the lower layer is never written). */
function overlayReader(lower: LowerLayer): TreeReader<Directory> {
  const place = (directory: Directory): [NormalizedPath, MergedEntry] =>
    typeof directory === 'string'
      ? [directory, new MergedEntry('directory', undefined, true)]
      : [directory.path, new MergedEntry('directory', directory.upper, directory.through)];
  const toChild = (path: NormalizedPath, entry: MergedEntry): TreeChild<Directory> => {
    const upper = entry.upper;
    const text = (value: string): Uint8Array => new TextEncoder().encode(value);
    if (upper?.type === 'directory') return { kind: 'directory', directory: directoryOf(upper, path, entry.through) };
    if (upper?.type === 'file')
      return { kind: 'file', executable: upper.executable, identity: upper, bytes: async () => copyBytes(upper.content) };
    if (upper?.type === 'symlink') return { kind: 'symlink', identity: upper, bytes: async () => text(upper.target) };
    if (entry.kind === 'directory') return { kind: 'directory', directory: path };
    if (entry.kind === 'symlink') return { kind: 'symlink', identity: `lower link ${path}`, bytes: async () => text(lower.readlink(path)) };
    const stat = entry.lowerStat ?? lower.entry(path, 0)?.stat;
    const bytes = async (): Promise<Uint8Array> => (await lower.readFile(path, { offset: 0 })).content;
    return { kind: 'file', executable: stat !== undefined && lowerExecutable(stat), identity: `lower file ${path}`, bytes };
  };
  return {
    async child(directory, name) {
      const [path, entry] = place(directory);
      const found = mergedChild(lower, path, entry, name);
      return found === undefined ? undefined : toChild(joinPath(path, name), found);
    },
    async children(directory) {
      const [path, entry] = place(directory);
      return (await mergedChildren(lower, path, entry)).map(([name, found]) => [name, toChild(joinPath(path, name), found)]);
    },
  };
}

/** Whether a path holds the same bytes in two trees (a rewrite with equal content is no change). */
async function sameContent(before: SnapshotTree, after: SnapshotTree, path: string): Promise<boolean> {
  const [a, b] = [await before.entry(path), await after.entry(path)];
  if (a === undefined || b === undefined || a.kind === 'directory' || b.kind === 'directory' || a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file' && a.executable !== b.executable) return false;
  return Buffer.from(await a.bytes()).equals(await b.bytes());
}
