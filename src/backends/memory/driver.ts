import type {
  BackendDriver,
  DriverBulkEntry,
  DriverEntryKind,
  DriverFileHandle,
  DriverListEntry,
  DriverStat,
  DriverWalkEntry,
} from '../../workspace/driver.js';
import { copyBytes } from '../../workspace/bytes.js';
import { FileExistsError, FileNotFoundError, IsADirectoryError, NotADirectoryError } from '../../workspace/errors.js';
import { resolveLinks, type LinkTree, type ResolvedPath } from '../../workspace/links.js';
import { guessMimeType } from '../../workspace/mime.js';
import { displayPath, isChildOf, joinPath, parentPath, splitPath, type NormalizedPath } from '../../workspace/paths.js';
import type { DriverWriteOptions } from '../../workspace/driver.js';
import { MemorySnapshotter } from './snapshotter.js';
import {
  emptyDirectory,
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
 * shares its subtree, metadata included, in O(1). Files carry git's executable bit; symlinks are nodes
 * holding their target text, followed by every primitive only inside the tree (`resolveLinks`).
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
  #lastFollow = false;
  #lastResolved: ResolvedPath<TreeNode> | undefined;
  /** A directory that leads to itself in `#directoryTree` (its node; undefined when missing): see `#resolveInDirectory`. */
  #directoryTree: DirectoryNode | undefined;
  #directoryPath: NormalizedPath | undefined;
  #directoryNode: DirectoryNode | undefined;

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

  async writeFile(path: NormalizedPath, content: Uint8Array, request: DriverWriteOptions): Promise<void> {
    const now = Date.now();
    // Through a link: its target (a dangling link's target is created, in a directory that exists).
    const real = this.#resolve(path, true).path;
    this.tree = updateEntry(this.tree, splitPath(real), this.#fileUpdate(path, real, content, request, now), real === path, now);
  }

  /**
   * The whole batch applied to the tree in one pass, then swapped in. The bytes are the shared layer's own
   * (copied on the way in, or handed over by hydration): kept as they are. A batch whose paths pass through a
   * link goes entry by entry, each resolved as a single write is.
   */
  async writeFiles(entries: readonly DriverBulkEntry[]): Promise<void> {
    const now = Date.now();
    const changes: BulkChange[] = [];
    // One function for the batch, each change a small object naming its entry: no closure per file.
    const apply = (entry: DriverBulkEntry, existing: TreeNode | undefined): TreeNode | undefined => this.#bulkNode(entry, existing, now);
    let direct = true;
    let checkedParent: NormalizedPath | undefined;
    for (const entry of entries) {
      const path = entry.path;
      if (path === '') continue; // the root, a directory already
      // Files of one directory come together: its parent resolved once for them.
      if (direct && (checkedParent === undefined || !isChildOf(path, checkedParent))) {
        checkedParent = parentPath(path);
        direct = this.#leadsToItself(checkedParent);
      }
      changes.push(new BulkChange(entry, apply));
    }
    if (!direct) {
      for (const entry of entries) await this.#writeOne(entry, now);
      return;
    }
    try {
      this.tree = updateEntries(this.tree, changes, now);
    } catch {
      // One by one: the entries before the first that fails stay written, and its error is the one thrown.
      for (const change of changes)
        this.tree = updateEntry(this.tree, splitPath(change.path), (existing) => change.update(existing), true, now);
    }
  }

  /** One bulk entry as the single primitives write it (links on its path followed). */
  async #writeOne(entry: DriverBulkEntry, now: number): Promise<void> {
    if (splitPath(entry.path).length === 0) return;
    if (entry.kind === 'file') return this.writeFile(entry.path, entry.content, { mode: 'overwrite', executable: entry.executable });
    if (entry.kind === 'directory') return this.mkdir(entry.path);
    const real = this.#resolve(entry.path, false).path;
    this.tree = updateEntry(this.tree, splitPath(real), linkUpdate(entry.path, entry.target, now), true, now);
  }

  #bulkNode(entry: DriverBulkEntry, existing: TreeNode | undefined, now: number): TreeNode | undefined {
    if (entry.kind === 'file')
      return this.#fileNode(existing, entry.path, entry.path, entry.content, entry.executable ? OVERWRITE_EXECUTABLE : OVERWRITE, now);
    if (entry.kind === 'directory') return directoryUpdate(entry.path, now)(existing);
    return linkUpdate(entry.path, entry.target, now)(existing);
  }

  /** Whether no link lies on `path` (nothing to resolve), answered without throwing. */
  #leadsToItself(path: NormalizedPath): boolean {
    try {
      return this.#resolve(path, true).path === path;
    } catch {
      return false;
    }
  }

  /** What a write does at `real` (where `path` leads): a new file, or the existing one with these bytes. */
  #fileUpdate(path: NormalizedPath, real: NormalizedPath, incoming: Uint8Array, request: DriverWriteOptions, now: number): EntryUpdate {
    return (existing) => this.#fileNode(existing, path, real, incoming, request, now);
  }

  #fileNode(
    existing: TreeNode | undefined,
    path: NormalizedPath,
    real: NormalizedPath,
    incoming: Uint8Array,
    request: DriverWriteOptions,
    now: number,
  ): TreeNode {
    // `incoming` is the shared layer's copy, nobody else's: kept as it is.
    if (existing?.type === 'directory') throw new IsADirectoryError(displayPath(path));
    if (existing?.type === 'symlink') throw new FileExistsError(displayPath(path));
    if (existing === undefined) {
      const mimeType = request.mimeType ?? guessMimeType(real);
      const executable = request.executable === true;
      return { type: 'file', content: incoming, createdAt: now, modifiedAt: now, version: ++this.#clock, mimeType, executable };
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
      executable: request.executable ?? existing.executable,
    };
  }

  async setExecutable(path: NormalizedPath, executable: boolean): Promise<void> {
    const now = Date.now();
    const real = this.#resolve(path, true).path;
    this.tree = updateEntry(
      this.tree,
      splitPath(real),
      (existing) => {
        if (existing === undefined) throw new FileNotFoundError(displayPath(path));
        if (existing.type !== 'file') throw new IsADirectoryError(displayPath(path));
        // A change git records: a new version, as for a write.
        return { ...existing, executable, modifiedAt: now, version: ++this.#clock };
      },
      false,
      now,
    );
  }

  async symlink(target: string, path: NormalizedPath): Promise<void> {
    const now = Date.now();
    const real = this.#resolve(path, false).path;
    this.tree = updateEntry(
      this.tree,
      splitPath(real),
      (existing) => {
        if (existing !== undefined) throw new FileExistsError(displayPath(path));
        return { type: 'symlink', target, createdAt: now, modifiedAt: now };
      },
      true,
      now,
    );
  }

  /** Where an access to `path` lands, links followed: what a policy and the `protect` rule judge. */
  async resolve(path: NormalizedPath): Promise<NormalizedPath> {
    return this.#resolve(path, true).path;
  }

  /** `resolve` at once: the tree is in memory. */
  resolveNow(path: NormalizedPath): NormalizedPath {
    return this.#resolve(path, true).path;
  }

  async readlink(path: NormalizedPath): Promise<string> {
    const node = this.#resolve(path, false).node;
    if (node === undefined) throw new FileNotFoundError(displayPath(path));
    if (node.type !== 'symlink') throw Object.assign(new Error('not a symlink'), { code: 'EINVAL' });
    return node.target;
  }

  /** Undefined below a file, as for a missing path (the shared layer says ENOTDIR where it matters). */
  async kind(path: NormalizedPath): Promise<DriverEntryKind | undefined> {
    try {
      return this.#resolve(path, false).node?.type;
    } catch (error) {
      if (error instanceof NotADirectoryError) return undefined;
      throw error;
    }
  }

  async stat(path: NormalizedPath): Promise<DriverStat> {
    const own = this.#resolve(path, false).node;
    if (own === undefined) throw new FileNotFoundError(displayPath(path));
    const node = own.type === 'symlink' ? this.#resolve(path, true).node : own;
    const isSymlink = own.type === 'symlink';
    if (node === undefined || node.type === 'symlink') {
      // Dangling (inside the root): the link itself.
      const times = { createdAt: new Date(own.createdAt), modifiedAt: new Date(own.modifiedAt) };
      return { ...times, isFile: false, isDirectory: false, isSymlink, sizeBytes: 0 };
    }
    const times = { createdAt: new Date(node.createdAt), modifiedAt: new Date(node.modifiedAt) };
    if (node.type === 'directory') return { ...times, isFile: false, isDirectory: true, isSymlink, sizeBytes: 0 };
    return {
      ...times,
      isFile: true,
      isDirectory: false,
      isSymlink,
      executable: node.executable,
      sizeBytes: node.content.byteLength,
      mimeType: node.mimeType,
      version: node.version,
    };
  }

  async list(path: NormalizedPath): Promise<DriverListEntry[]> {
    const node = this.#node(path, true);
    if (node.type !== 'directory') throw new NotADirectoryError(displayPath(path));
    return [...node.children.entries()].map(([name, child]) => ({ name, kind: child.type }));
  }

  async *walk(base: NormalizedPath): AsyncIterable<DriverWalkEntry> {
    // The tree is immutable: walking the root captured here stays consistent whatever runs meanwhile.
    const start = this.#resolve(base, true).node;
    if (start === undefined || start.type !== 'directory') return;
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
    this.tree = updateEntry(this.tree, splitPath(this.#resolve(path, true).path), directoryUpdate(path, now), true, now);
  }

  // Memory holds nothing it does not show, so the shared emptiness check is exact and `recursive` adds nothing.
  async remove(path: NormalizedPath): Promise<void> {
    const real = this.#resolve(path, false).path;
    this.tree = updateEntry(this.tree, splitPath(real), () => undefined, false, Date.now());
  }

  async move(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const source = this.#resolve(from, false);
    const node = this.#found(source, from);
    const target = this.#resolve(to, false).path;
    const now = Date.now();
    // Both steps are computed before the root is swapped, so a failure leaves nothing half-moved.
    const withoutSource = updateEntry(this.tree, splitPath(source.path), () => undefined, false, now);
    this.tree = updateEntry(withoutSource, splitPath(target), () => node, true, now);
  }

  async copy(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const node = this.#found(this.#resolve(from, false), from);
    const target = this.#resolve(to, false).path;
    const now = Date.now();
    const copy: TreeNode =
      node.type === 'file'
        ? { ...node, createdAt: now, modifiedAt: now, version: ++this.#clock }
        : node.type === 'symlink'
          ? { ...node, createdAt: now, modifiedAt: now }
          : node;
    this.tree = updateEntry(this.tree, splitPath(target), () => copy, true, now);
  }

  /** Releases the tree. */
  async dispose(): Promise<void> {
    this.tree = emptyDirectory(Date.now());
    this.#lastTree = this.#lastResolved = this.#directoryTree = this.#directoryNode = undefined;
  }

  /** The tree as `resolveLinks` walks it. */
  get #links(): LinkTree<TreeNode> {
    return { root: this.tree, child: childOf, kind: kindOf, target: targetOf };
  }

  /**
   * Where `path` leads when its parent leads to itself (no link on the way): the entry named there, found
   * in one step. The parent's answer is remembered for the tree it was found in, so that the files of one
   * directory (a bulk write checks each of them) cost one lookup each. Undefined when a full resolution is
   * needed: a link at the end to follow, or a parent reached through a link.
   */
  #resolveInDirectory(path: NormalizedPath, followFinal: boolean): ResolvedPath<TreeNode> | undefined {
    const slash = path.lastIndexOf('/');
    if (slash === -1) return undefined;
    const known = this.#directoryPath;
    // The remembered parent compared in place: no parent cut out of every path.
    if (this.#directoryTree !== this.tree || known === undefined || known.length !== slash || !path.startsWith(known)) {
      const parent = path.slice(0, slash);
      let reached: ResolvedPath<TreeNode>;
      try {
        reached = resolveLinks(this.#links, parent, true);
      } catch {
        return undefined;
      }
      if (reached.path !== parent || (reached.node !== undefined && reached.node.type !== 'directory')) return undefined;
      this.#directoryTree = this.tree;
      this.#directoryPath = parent;
      this.#directoryNode = reached.node;
    }
    // A missing parent: nothing below it exists, and the path stays as written.
    const node = this.#directoryNode?.children.get(path.slice(slash + 1));
    if (node?.type === 'symlink' && followFinal) return undefined;
    return { path, node };
  }

  /**
   * Where `path` leads (its links followed inside the tree; the final one only when `followFinal`),
   * remembering the last answer: the shared layer asks `kind()` right before it reads or stats the same
   * path, and the tree is immutable, so one tree and one path always lead to the same node.
   */
  #resolve(path: NormalizedPath, followFinal: boolean): ResolvedPath<TreeNode> {
    if (this.#lastTree === this.tree && this.#lastPath === path) {
      const last = this.#lastResolved as ResolvedPath<TreeNode>;
      // Not following the final entry found no link there: following it finds the same.
      if (this.#lastFollow === followFinal || (!this.#lastFollow && last.node?.type !== 'symlink')) return last;
    }
    const resolved = this.#resolveInDirectory(path, followFinal) ?? resolveLinks(this.#links, path, followFinal);
    this.#lastTree = this.tree;
    this.#lastPath = path;
    this.#lastFollow = followFinal;
    this.#lastResolved = resolved;
    return resolved;
  }

  #node(path: NormalizedPath, followFinal: boolean): TreeNode {
    return this.#found(this.#resolve(path, followFinal), path);
  }

  #found(resolved: ResolvedPath<TreeNode>, path: NormalizedPath): TreeNode {
    if (resolved.node !== undefined) return resolved.node;
    throw new FileNotFoundError(displayPath(path));
  }

  #file(path: NormalizedPath): FileNode {
    const node = this.#node(path, true);
    if (node.type === 'directory') throw new IsADirectoryError(displayPath(path));
    if (node.type === 'symlink') throw new FileNotFoundError(displayPath(path));
    return node;
  }
}

/** One entry of a bulk write as the tree applies it (see `updateEntries`). */
class BulkChange implements EntryChange {
  readonly path: NormalizedPath;
  constructor(
    private readonly entry: DriverBulkEntry,
    private readonly apply: (entry: DriverBulkEntry, existing: TreeNode | undefined) => TreeNode | undefined,
  ) {
    this.path = entry.path;
  }

  update(existing: TreeNode | undefined): TreeNode | undefined {
    return this.apply(this.entry, existing);
  }
}

/** A bulk file's request (one object for all of them, not one per file). */
const OVERWRITE: DriverWriteOptions = Object.freeze({ mode: 'overwrite', executable: false });
const OVERWRITE_EXECUTABLE: DriverWriteOptions = Object.freeze({ mode: 'overwrite', executable: true });

const childOf = (directory: TreeNode, name: string): TreeNode | undefined =>
  directory.type === 'directory' ? directory.children.get(name) : undefined;
const kindOf = (node: TreeNode): DriverEntryKind => node.type;
const targetOf = (node: TreeNode): string => (node.type === 'symlink' ? node.target : '');

/** What `mkdir` does at `path`: an existing directory is kept, a file or link there is `EEXIST`. */
function directoryUpdate(path: NormalizedPath, now: number): EntryUpdate {
  return (existing) => {
    if (existing !== undefined && existing.type !== 'directory')
      throw new FileExistsError(displayPath(path), `already exists and is not a directory: ${displayPath(path)}`);
    return existing ?? emptyDirectory(now);
  };
}

/** A bulk link entry: replaces a file or link at `path`; a directory there is `EISDIR`. */
function linkUpdate(path: NormalizedPath, target: string, now: number): EntryUpdate {
  return (existing) => {
    if (existing?.type === 'directory') throw new IsADirectoryError(displayPath(path));
    return { type: 'symlink', target, createdAt: now, modifiedAt: now };
  };
}
