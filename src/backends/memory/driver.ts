import type {
  BackendDriver,
  DriverBulkEntry,
  DriverEntryKind,
  DriverFileHandle,
  DriverListEntry,
  DriverStat,
  DriverWalkEntry,
  Snapshotter,
  SnapshotTree,
} from '../../workspace/driver.js';
import { copyBytes } from '../../workspace/bytes.js';
import { memorySnapshotTree } from './snapshot-tree.js';
import { FileExistsError, FileNotFoundError, IsADirectoryError, NotADirectoryError } from '../../workspace/errors.js';
import { guessMimeType } from '../../workspace/mime.js';
import { displayPath, joinPath, splitPath, type NormalizedPath } from '../../workspace/paths.js';
import { HeldSnapshots } from '../../snapshots/held.js';
import { sortDiff } from '../../snapshots/record.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot, WriteMode } from '../../workspace/types.js';
import {
  diffTrees,
  emptyDirectory,
  lookup,
  updateEntries,
  updateEntry,
  type DirectoryNode,
  type EntryChange,
  type EntryUpdate,
  type FileNode,
  type TreeNode,
} from './tree.js';

/**
 * The memory backend's driver: a persistent tree (see tree.ts). Every primitive runs synchronously once
 * called, so concurrent calls never interleave inside one another. Files carry metadata: `createdAt` (kept
 * on overwrite), `modifiedAt`, a `version` from one clock for the whole driver (each write or copy takes the
 * next number, so a restore brings back a file's version with its contents and no number ever names two
 * contents), and a `mimeType` taken from the write or guessed from the extension. A copied file is a new
 * file (a new version, fresh times); a copied directory
 * shares its subtree, metadata included, in O(1). There are no symlinks and no permission bits.
 */
export class MemoryDriver implements BackendDriver {
  readonly name = 'memory';
  readonly root = '/';
  tree: DirectoryNode = emptyDirectory(Date.now());
  readonly snapshots: MemorySnapshotter = new MemorySnapshotter(this);
  /** The last version handed out. */
  #clock = 0;
  #lastTree: DirectoryNode | undefined;
  #lastPath: NormalizedPath | undefined;
  #lastNode: TreeNode | undefined;

  /**
   * An independent driver with the same tree and the same snapshots (every record taken here so far
   * restores there too), in O(1) of the tree's size: the tree is persistent, so sharing it copies nothing.
   */
  fork(): MemoryDriver {
    const fork = new MemoryDriver();
    fork.tree = this.tree;
    // Versions go on from here: a record restored in the fork never shares a number with a later write.
    fork.#clock = this.#clock;
    fork.snapshots.inherit(this.snapshots);
    return fork;
  }

  async readFile(path: NormalizedPath, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    const file = this.#file(path);
    const end = range.length === undefined ? file.content.byteLength : range.offset + range.length;
    // A view of the stored bytes, never changed in place: the shared layer copies before a caller sees them.
    return { content: file.content.subarray(range.offset, end), sizeBytes: file.content.byteLength };
  }

  /** A read stream's file: its contents as they are now (never changed in place), whatever is written meanwhile. */
  async openFile(path: NormalizedPath): Promise<DriverFileHandle> {
    const content = this.#file(path).content;
    return {
      sizeBytes: content.byteLength,
      read: async (offset, length) => copyBytes(content, offset, offset + length),
      close: async () => {},
    };
  }

  async writeFile(path: NormalizedPath, content: Uint8Array, request: { mode: WriteMode; mimeType?: string }): Promise<void> {
    const now = Date.now();
    this.tree = updateEntry(this.tree, splitPath(path), this.#fileUpdate(path, content, request, now), true, now);
  }

  /**
   * The whole batch applied to the tree in one pass, then swapped in. The bytes are the shared layer's own
   * (copied on the way in, or handed over by hydration): kept as they are.
   */
  async writeFiles(entries: readonly DriverBulkEntry[]): Promise<void> {
    const now = Date.now();
    const changes: EntryChange[] = [];
    for (const entry of entries) {
      const segments = splitPath(entry.path);
      if (segments.length === 0) continue; // the root, a directory already
      const update =
        entry.kind === 'file' ? this.#fileUpdate(entry.path, entry.content, { mode: 'overwrite' }, now) : directoryUpdate(entry.path, now);
      changes.push({ segments, update });
    }
    try {
      this.tree = updateEntries(this.tree, changes, now);
    } catch {
      // One by one: the entries before the first that fails stay written, and its error is the one thrown.
      for (const { segments, update } of changes) this.tree = updateEntry(this.tree, segments, update, true, now);
    }
  }

  /** What a write does at `path`: a new file, or the existing one with these bytes (replaced or appended to). */
  #fileUpdate(path: NormalizedPath, incoming: Uint8Array, request: { mode: WriteMode; mimeType?: string }, now: number): EntryUpdate {
    // `incoming` is the shared layer's copy, nobody else's: kept as it is.
    return (existing) => {
      if (existing?.type === 'directory') throw new IsADirectoryError(displayPath(path));
      if (existing === undefined) {
        const mimeType = request.mimeType ?? guessMimeType(path);
        return { type: 'file', content: incoming, createdAt: now, modifiedAt: now, version: ++this.#clock, mimeType };
      }
      if (request.mode === 'create')
        throw new FileExistsError(displayPath(path), `already exists: ${displayPath(path)} (mode 'create' never replaces a file)`);
      let bytes = incoming;
      if (request.mode === 'append') {
        bytes = new Uint8Array(existing.content.byteLength + incoming.byteLength);
        bytes.set(existing.content, 0);
        bytes.set(incoming, existing.content.byteLength);
      }
      return {
        ...existing,
        content: bytes,
        modifiedAt: now,
        version: ++this.#clock,
        mimeType: request.mimeType ?? existing.mimeType,
      };
    };
  }

  async kind(path: NormalizedPath): Promise<DriverEntryKind | undefined> {
    return this.#lookup(path)?.type;
  }

  async stat(path: NormalizedPath): Promise<DriverStat> {
    const node = this.#node(path);
    const times = { createdAt: new Date(node.createdAt), modifiedAt: new Date(node.modifiedAt) };
    if (node.type === 'directory') return { ...times, isFile: false, isDirectory: true, isSymlink: false, sizeBytes: 0 };
    const size = node.content.byteLength;
    return {
      ...times,
      isFile: true,
      isDirectory: false,
      isSymlink: false,
      sizeBytes: size,
      mimeType: node.mimeType,
      version: node.version,
    };
  }

  async list(path: NormalizedPath): Promise<DriverListEntry[]> {
    const node = this.#node(path);
    if (node.type !== 'directory') throw new NotADirectoryError(displayPath(path));
    return [...node.children.entries()].map(([name, child]) => ({ name, kind: child.type }));
  }

  async *walk(base: NormalizedPath): AsyncIterable<DriverWalkEntry> {
    // The tree is immutable: walking the root captured here stays consistent whatever runs meanwhile.
    const start = lookup(this.tree, splitPath(base));
    if (start === undefined || start.type === 'file') return;
    const pending: [NormalizedPath, DirectoryNode][] = [[base, start]];
    while (pending.length > 0) {
      const [directoryPath, directory] = pending.pop() as [NormalizedPath, DirectoryNode];
      for (const [name, child] of directory.children.entries()) {
        const childPath = joinPath(directoryPath, name);
        yield { path: childPath, kind: child.type };
        if (child.type === 'directory') pending.push([childPath, child]);
      }
    }
  }

  async mkdir(path: NormalizedPath): Promise<void> {
    const now = Date.now();
    this.tree = updateEntry(this.tree, splitPath(path), directoryUpdate(path, now), true, now);
  }

  // Memory holds nothing it does not show, so the shared emptiness check is exact and `recursive` adds nothing.
  async remove(path: NormalizedPath): Promise<void> {
    this.tree = updateEntry(this.tree, splitPath(path), () => undefined, false, Date.now());
  }

  async move(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const node = this.#node(from);
    const now = Date.now();
    // Both steps are computed before the root is swapped, so a failure leaves nothing half-moved.
    const withoutSource = updateEntry(this.tree, splitPath(from), () => undefined, false, now);
    this.tree = updateEntry(withoutSource, splitPath(to), () => node, true, now);
  }

  async copy(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const node = this.#node(from);
    const now = Date.now();
    const copy: TreeNode = node.type === 'file' ? { ...node, createdAt: now, modifiedAt: now, version: ++this.#clock } : node;
    this.tree = updateEntry(this.tree, splitPath(to), () => copy, true, now);
  }

  /** Releases the tree. */
  async dispose(): Promise<void> {
    this.tree = emptyDirectory(Date.now());
    this.#lastTree = this.#lastNode = undefined;
  }

  /**
   * The node at `path`, remembering the last answer: the shared layer asks `kind()` right before it reads or
   * stats the same path, and the tree is immutable, so one tree and one path always name the same node.
   */
  #lookup(path: NormalizedPath): TreeNode | undefined {
    if (this.#lastTree === this.tree && this.#lastPath === path) return this.#lastNode;
    const node = lookup(this.tree, splitPath(path));
    this.#lastTree = this.tree;
    this.#lastPath = path;
    this.#lastNode = node;
    return node;
  }

  #node(path: NormalizedPath): TreeNode {
    const node = this.#lookup(path);
    if (node !== undefined) return node;
    const segments = splitPath(path);
    // Say ENOTDIR rather than ENOENT when the way is blocked by a file, as a disk would.
    for (let depth = 1; depth < segments.length; depth += 1) {
      const ancestor = lookup(this.tree, segments.slice(0, depth));
      const shown = segments.slice(0, depth).join('/');
      if (ancestor?.type === 'file') throw new NotADirectoryError(shown, `not a directory: ${shown} is a file`);
      if (ancestor === undefined) break;
    }
    throw new FileNotFoundError(displayPath(path));
  }

  #file(path: NormalizedPath): FileNode {
    const node = this.#node(path);
    if (node.type === 'directory') throw new IsADirectoryError(displayPath(path));
    return node;
  }
}

/**
 * Memory snapshots are O(1) in time and memory: a snapshot keeps a reference to the current root, and a
 * later write copies only the directories (and hash-trie nodes) on the path to the changed entry. Refs name
 * the instance, so a record taken elsewhere can never restore here.
 */
export class MemorySnapshotter implements Snapshotter {
  readonly #driver: MemoryDriver;
  readonly #held = new HeldSnapshots<DirectoryNode>('memory');

  constructor(driver: MemoryDriver) {
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

/** What `mkdir` does at `path`: an existing directory is kept, a file there is `EEXIST`. */
function directoryUpdate(path: NormalizedPath, now: number): EntryUpdate {
  return (existing) => {
    if (existing?.type === 'file')
      throw new FileExistsError(displayPath(path), `already exists and is not a directory: ${displayPath(path)}`);
    return existing ?? emptyDirectory(now);
  };
}
