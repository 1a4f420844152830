import { randomUUID } from 'node:crypto';
import { FileExistsError, FileNotFoundError, IsADirectoryError, NotADirectoryError, SnapshotRestoreError } from '../../workspace/errors.js';
import { BaseWorkspace, type BaseWorkspaceOptions, type EntryKind, type WalkEntry, type WriteFileRequest } from '../../workspace/base.js';
import { guessMimeType } from '../../workspace/mime.js';
import { displayPath, joinPath, splitPath, type NormalizedPath } from '../../workspace/paths.js';
import { parseSnapshotRecord, sortDiff } from '../../snapshots/record.js';
import type {
  DiffEntry,
  ListEntry,
  RestoreResult,
  SnapshotableWorkspace,
  SnapshotOptions,
  StatResult,
  WorkspaceSnapshot,
} from '../../workspace/types.js';
import { diffTrees, emptyDirectory, lookup, updateEntry, type DirectoryNode, type FileNode, type TreeNode } from './tree.js';

export type MemoryWorkspaceOptions = BaseWorkspaceOptions;

interface HeldSnapshot {
  readonly id: string;
  readonly tree: DirectoryNode;
}

/**
 * The embedded default backend: a persistent tree held in memory.
 *
 * - `snapshot()` is O(1) in time and memory: it keeps a reference to the current root. A later write copies
 *   only the directories (and the hash-trie nodes inside them) on the path to the changed entry.
 * - Every operation runs synchronously once its arguments are checked, so concurrent calls never
 *   interleave inside one another and concurrent appends lose nothing.
 * - Files carry metadata: `createdAt` (kept on overwrite), `modifiedAt`, a `version` counting writes, and a
 *   `mimeType` taken from the write options or guessed from the extension. A copied file is a new file
 *   (version 1, fresh times); a copied directory shares its subtree, metadata included, in O(1).
 * - There are no symlinks and no permission bits.
 */
export class MemoryWorkspace extends BaseWorkspace implements SnapshotableWorkspace {
  readonly backend = 'memory' as const;
  readonly root = '/';

  /** Snapshot refs name the instance, so a record taken elsewhere can never restore here. */
  readonly #instanceId = randomUUID();
  #tree: DirectoryNode;
  #snapshotCount = 0;
  readonly #snapshots = new Map<string, HeldSnapshot>();

  constructor(options: MemoryWorkspaceOptions = {}) {
    super(options);
    this.#tree = emptyDirectory(Date.now());
  }

  // ---- primitives -------------------------------------------------------------------------------------

  protected async readFileAt(
    path: NormalizedPath,
    range: { offset: number; length?: number },
  ): Promise<{ content: Uint8Array; sizeBytes: number }> {
    const file = this.#file(path);
    const end = range.length === undefined ? file.content.byteLength : range.offset + range.length;
    // `slice` copies: handing out the stored bytes would let a caller rewrite every snapshot sharing them.
    return { content: file.content.slice(range.offset, end), sizeBytes: file.content.byteLength };
  }

  protected async writeFileAt(path: NormalizedPath, content: Uint8Array, request: WriteFileRequest): Promise<void> {
    const now = Date.now();
    const incoming = content.slice();
    this.#tree = updateEntry(
      this.#tree,
      splitPath(path),
      (existing) => {
        if (existing?.type === 'directory') throw new IsADirectoryError(displayPath(path));
        if (existing === undefined) {
          return {
            type: 'file',
            content: incoming,
            createdAt: now,
            modifiedAt: now,
            version: 1,
            mimeType: request.mimeType ?? guessMimeType(path),
          };
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
          version: existing.version + 1,
          mimeType: request.mimeType ?? existing.mimeType,
        };
      },
      request.createParents,
      now,
    );
  }

  protected async entryKind(path: NormalizedPath): Promise<EntryKind | undefined> {
    return lookup(this.#tree, splitPath(path))?.type;
  }

  protected async statAt(path: NormalizedPath): Promise<StatResult> {
    const node = this.#node(path);
    const common = {
      path: displayPath(path),
      isSymlink: false,
      createdAt: new Date(node.createdAt),
      modifiedAt: new Date(node.modifiedAt),
    };
    if (node.type === 'directory') return { ...common, isFile: false, isDirectory: true, sizeBytes: 0 };
    return {
      ...common,
      isFile: true,
      isDirectory: false,
      sizeBytes: node.content.byteLength,
      mimeType: node.mimeType,
      version: node.version,
    };
  }

  protected async listAt(path: NormalizedPath): Promise<ListEntry[]> {
    const node = this.#node(path);
    if (node.type !== 'directory') throw new NotADirectoryError(displayPath(path));
    const entries: ListEntry[] = [];
    for (const [name, child] of node.children.entries()) {
      entries.push({
        name,
        path: joinPath(path, name),
        isFile: child.type === 'file',
        isDirectory: child.type === 'directory',
        isSymlink: false,
      });
    }
    return entries;
  }

  protected async *walk(base: NormalizedPath): AsyncIterable<WalkEntry> {
    // The tree is immutable: walking the root captured here stays consistent whatever runs meanwhile.
    const start = lookup(this.#tree, splitPath(base));
    if (start === undefined) return;
    if (start.type === 'file') {
      yield { path: base, isFile: true, isDirectory: false };
      return;
    }
    const pending: [NormalizedPath, DirectoryNode][] = [[base, start]];
    while (pending.length > 0) {
      const [directoryPath, directory] = pending.pop() as [NormalizedPath, DirectoryNode];
      for (const [name, child] of directory.children.entries()) {
        const childPath = joinPath(directoryPath, name);
        yield { path: childPath, isFile: child.type === 'file', isDirectory: child.type === 'directory' };
        if (child.type === 'directory') pending.push([childPath, child]);
      }
    }
  }

  protected async makeDirectory(path: NormalizedPath): Promise<void> {
    const now = Date.now();
    this.#tree = updateEntry(
      this.#tree,
      splitPath(path),
      (existing) => {
        if (existing?.type === 'file')
          throw new FileExistsError(displayPath(path), `already exists and is not a directory: ${displayPath(path)}`);
        return existing ?? emptyDirectory(now);
      },
      true,
      now,
    );
  }

  // Memory holds nothing it does not show, so the shared emptiness check is exact and `recursive` adds nothing.
  protected async removeEntry(path: NormalizedPath, _options: { recursive: boolean }): Promise<void> {
    this.#tree = updateEntry(this.#tree, splitPath(path), () => undefined, false, Date.now());
  }

  protected async moveEntry(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const node = this.#node(from);
    const now = Date.now();
    // Both steps are computed before the root is swapped, so a failure leaves nothing half-moved.
    const withoutSource = updateEntry(this.#tree, splitPath(from), () => undefined, false, now);
    this.#tree = updateEntry(withoutSource, splitPath(to), () => node, true, now);
  }

  protected async copyEntry(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    const node = this.#node(from);
    const now = Date.now();
    const copy: TreeNode = node.type === 'file' ? { ...node, createdAt: now, modifiedAt: now, version: 1 } : node;
    this.#tree = updateEntry(this.#tree, splitPath(to), () => copy, true, now);
  }

  // ---- snapshots --------------------------------------------------------------------------------------

  async snapshot(options: SnapshotOptions = {}): Promise<WorkspaceSnapshot> {
    this.#snapshotCount += 1;
    const ref = `memory:${this.#instanceId}:${this.#snapshotCount}`;
    const id = randomUUID();
    this.#snapshots.set(ref, { id, tree: this.#tree });
    const record: WorkspaceSnapshot = { id, backend: 'memory', ref, createdAt: new Date().toISOString(), root: this.root };
    if (options.tag !== undefined) record.tag = options.tag;
    return record;
  }

  async restore(snapshot: WorkspaceSnapshot): Promise<RestoreResult> {
    this.assertWritable();
    this.#tree = this.#heldTree(snapshot);
    return { skipped: [] };
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot): Promise<DiffEntry[]> {
    const before = this.#heldTree(from);
    const after = to === undefined ? this.#tree : this.#heldTree(to);
    const entries: DiffEntry[] = [];
    diffTrees(before, after, (path, status) => entries.push({ path, status }));
    return sortDiff(entries);
  }

  /** Releases the tree and every snapshot. The workspace is empty afterwards and its old records restore nothing. */
  async dispose(): Promise<void> {
    this.#snapshots.clear();
    this.#tree = emptyDirectory(Date.now());
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  // ---- helpers ----------------------------------------------------------------------------------------

  #heldTree(snapshot: WorkspaceSnapshot): DirectoryNode {
    const record = parseSnapshotRecord(snapshot);
    if (record.backend !== 'memory')
      throw new SnapshotRestoreError(`snapshot ${record.id} belongs to a ${record.backend} workspace, not this memory workspace`);
    const held = this.#snapshots.get(record.ref);
    if (held === undefined || held.id !== record.id) {
      throw new SnapshotRestoreError(`snapshot ${record.id} was not taken by this workspace (or the workspace was disposed)`);
    }
    return held.tree;
  }

  #node(path: NormalizedPath): TreeNode {
    const segments = splitPath(path);
    const node = lookup(this.#tree, segments);
    if (node !== undefined) return node;
    // Say ENOTDIR rather than ENOENT when the way is blocked by a file, as a disk would.
    for (let depth = 1; depth < segments.length; depth += 1) {
      const ancestor = lookup(this.#tree, segments.slice(0, depth));
      if (ancestor?.type === 'file')
        throw new NotADirectoryError(
          segments.slice(0, depth).join('/'),
          `not a directory: ${segments.slice(0, depth).join('/')} is a file`,
        );
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
