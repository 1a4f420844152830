import { randomUUID } from 'node:crypto';
import type {
  BackendDriver,
  BlobStore,
  DriverEntryKind,
  DriverListEntry,
  DriverStat,
  DriverWalkEntry,
  Snapshotter,
  SnapshotTree,
} from '../workspace/driver.js';
import { SnapshotError, SnapshotRestoreError } from '../workspace/errors.js';
import { guessMimeType } from '../workspace/mime.js';
import { joinPath, splitPath } from '../workspace/paths.js';
import { diffManifests, encodeManifest, manifestReader, readManifest, sha256, type ManifestEntry } from '../snapshots/manifest.js';
import { snapshotTree, type TreeReader } from '../snapshots/snapshot-tree.js';
import { sortDiff } from '../snapshots/record.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot, WriteMode } from '../workspace/types.js';

/** A file: `hash` set means its bytes are that blob; unset means changed since the last capture (`bytes` holds them). */
interface LazyFile {
  kind: 'file';
  hash: string | undefined;
  bytes: Uint8Array | undefined;
  size: number;
  version: number;
  modifiedAt: number;
  mimeType: string | undefined;
}

/** A directory: `children` unset means not loaded yet (its manifest is `hash`); `hash` unset means changed below. */
interface LazyDir {
  kind: 'dir';
  hash: string | undefined;
  children: Map<string, LazyNode> | undefined;
  modifiedAt: number;
}

type LazyNode = LazyFile | LazyDir;

/** What a capture produced: the root manifest, and every blob it stored or referenced anew. */
export interface Capture {
  root: string;
  /** Hashes of the files and manifests that changed since the previous capture (what a publish uploads). */
  fresh: string[];
}

const REF_PREFIX = 'sha256:';
const codeError = (code: string, path: string): Error => Object.assign(new Error(`${code}: ${path}`), { code });

/**
 * A memory workspace over a content-addressed blob store, filled lazily: opening it on a root manifest is
 * O(1), a directory's manifest is fetched the first time something below it is touched, and a file's bytes
 * every time it is read (the blob store caches). Changes stay in memory until a capture stores them (files
 * first, then the manifests above them, bottom-up), after which only hashes are held: memory stays bounded
 * by what changed since the last capture plus the loaded manifests.
 *
 * Snapshots are the root manifest's hash: taking one is O(changes), restoring one is O(1) (the tree is
 * replaced by its unloaded root), and a record restores in any workspace over the same blob store, which
 * is how a session resumes on another machine. There are no symlinks and no permission bits.
 */
export class BlobTreeDriver implements BackendDriver {
  readonly name = 'memory';
  readonly root = '/';
  readonly snapshots: Snapshotter;
  readonly blobs: BlobStore;
  #tree: LazyDir;
  #unpublished = new Map<string, Uint8Array>();
  /** The last file version handed out: one clock, so no number ever names two contents (see `DriverStat.version`). */
  #clock = 0;

  readonly #trackUnpublished: boolean;

  /**
   * `root`: the manifest hash to open lazily; omitted for an empty workspace. `trackUnpublished`: remember
   * every blob captures store or find stored, with its bytes, until `published()` (what a remote
   * session's publish needs to put back any a collection deleted in between).
   */
  constructor(blobs: BlobStore, root?: string, options: { trackUnpublished?: boolean } = {}) {
    this.blobs = blobs;
    this.#trackUnpublished = options.trackUnpublished === true;
    this.#tree = root === undefined ? emptyDir() : unloadedDir(root);
    this.snapshots = new BlobTreeSnapshotter(this);
  }

  async readFile(path: string, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    const file = await this.#file(path);
    const bytes = await this.#bytes(file, path);
    const end = range.length === undefined ? bytes.byteLength : range.offset + range.length;
    // A view, never changed in place: the shared layer copies before a caller sees it.
    return { content: bytes.subarray(range.offset, end), sizeBytes: bytes.byteLength };
  }

  async writeFile(path: string, bytes: Uint8Array, options: { mode: WriteMode; mimeType?: string }): Promise<void> {
    const names = splitPath(path);
    const name = names.pop() as string;
    const parent = await this.#directory(names, true);
    const existing = parent.children?.get(name);
    if (existing?.kind === 'dir') throw codeError('EISDIR', path);
    let content = bytes; // the shared layer's copy, nobody else's: kept as it is
    if (options.mode === 'append' && existing !== undefined) {
      const before = await this.#bytes(existing, path);
      content = new Uint8Array(before.byteLength + bytes.byteLength);
      content.set(before);
      content.set(bytes, before.byteLength);
    }
    const mimeType = options.mimeType ?? existing?.mimeType ?? guessMimeType(path);
    const version = ++this.#clock;
    const file: LazyFile = {
      kind: 'file',
      hash: undefined,
      bytes: content,
      size: content.byteLength,
      version,
      modifiedAt: Date.now(),
      mimeType,
    };
    (parent.children as Map<string, LazyNode>).set(name, file);
  }

  async kind(path: string): Promise<DriverEntryKind | undefined> {
    const node = await this.#lookup(path);
    return node === undefined ? undefined : node.kind === 'dir' ? 'directory' : 'file';
  }

  async stat(path: string): Promise<DriverStat> {
    const node = await this.#node(path);
    const modifiedAt = new Date(node.modifiedAt);
    if (node.kind === 'dir') return { isFile: false, isDirectory: true, isSymlink: false, sizeBytes: 0, modifiedAt };
    const stat: DriverStat = {
      isFile: true,
      isDirectory: false,
      isSymlink: false,
      sizeBytes: node.size,
      modifiedAt,
      version: node.version,
    };
    if (node.mimeType !== undefined) stat.mimeType = node.mimeType;
    return stat;
  }

  async list(path: string): Promise<DriverListEntry[]> {
    const directory = await this.#directory(splitPath(path), false);
    return [...(directory.children as Map<string, LazyNode>)].map(([name, child]) => ({
      name,
      kind: child.kind === 'dir' ? 'directory' : 'file',
    }));
  }

  async *walk(base: string): AsyncIterable<DriverWalkEntry> {
    const start = await this.#lookup(base);
    if (start === undefined || start.kind === 'file') return;
    const pending: [string, LazyDir][] = [[base, start]];
    while (pending.length > 0) {
      const [directoryPath, directory] = pending.pop() as [string, LazyDir];
      for (const [name, child] of await this.#children(directory)) {
        const childPath = joinPath(directoryPath, name);
        yield { path: childPath, kind: child.kind === 'dir' ? 'directory' : 'file' };
        if (child.kind === 'dir') pending.push([childPath, child]);
      }
    }
  }

  async mkdir(path: string): Promise<void> {
    await this.#directory(splitPath(path), true, true);
  }

  async remove(path: string): Promise<void> {
    const names = splitPath(path);
    const name = names.pop() as string;
    const parent = await this.#directory(names, true);
    parent.children?.delete(name);
  }

  /** O(1): the subtree moves with its hashes, so an unchanged directory stays unloaded and is never re-stored. */
  async move(from: string, to: string): Promise<void> {
    const node = await this.#node(from);
    const toNames = splitPath(to);
    const toName = toNames.pop() as string;
    const target = await this.#directory(toNames, true);
    await this.remove(from);
    (target.children as Map<string, LazyNode>).set(toName, node);
  }

  /** A clean directory is copied as its manifest hash (O(1), loaded lazily); files share their bytes or hash. */
  async copy(from: string, to: string): Promise<void> {
    const node = await this.#node(from);
    const toNames = splitPath(to);
    const toName = toNames.pop() as string;
    const target = await this.#directory(toNames, true);
    (target.children as Map<string, LazyNode>).set(
      toName,
      cloneNode(node, () => ++this.#clock),
    );
  }

  async dispose(): Promise<void> {
    this.#tree = emptyDir();
  }

  /** Stores everything changed since the last capture: file blobs, then the manifests above them. */
  async capture(): Promise<Capture> {
    const fresh: string[] = [];
    const root = await this.#store(this.#tree, fresh);
    return { root, fresh };
  }

  /** Replaces the whole tree by the unloaded manifest `root` (O(1)); the manifest must be in the blob store. */
  async replaceRoot(root: string): Promise<void> {
    if (!(await this.blobs.has(root))) throw new SnapshotRestoreError(`the snapshot's manifest ${root} is missing from the blob store`);
    this.#tree = unloadedDir(root);
  }

  // ---- tree access --------------------------------------------------------------------------------------

  async #store(directory: LazyDir, fresh: string[]): Promise<string> {
    if (directory.hash !== undefined) return directory.hash;
    const entries: ManifestEntry[] = [];
    for (const [name, child] of directory.children as Map<string, LazyNode>) {
      if (child.kind === 'dir') entries.push([name, 'd', await this.#store(child, fresh), 0]);
      else {
        if (child.hash === undefined) {
          child.hash = await this.#put(child.bytes as Uint8Array, fresh);
          child.bytes = undefined;
        }
        entries.push([name, 'f', child.hash, child.size]);
      }
    }
    directory.hash = await this.#put(encodeManifest(entries), fresh);
    return directory.hash;
  }

  /** Stores a blob unless present (remembered for the next publish when tracking). */
  async #put(bytes: Uint8Array, fresh: string[]): Promise<string> {
    const hash = sha256(bytes);
    if (!(await this.blobs.has(hash))) await this.blobs.put(hash, bytes);
    if (this.#trackUnpublished) this.#unpublished.set(hash, bytes);
    fresh.push(hash);
    return hash;
  }

  /** Every blob captures stored or found stored since the last `published()`, with its bytes. */
  unpublished(): Map<string, Uint8Array> {
    return new Map(this.#unpublished);
  }

  /** Forgets the blobs a successful publish made reachable. */
  published(hashes: Iterable<string>): void {
    for (const hash of hashes) this.#unpublished.delete(hash);
  }

  async #children(directory: LazyDir): Promise<Map<string, LazyNode>> {
    if (directory.children !== undefined) return directory.children;
    const entries = await readManifest(this.blobs, directory.hash as string);
    // Another call may have loaded it while this one waited: keep the first, it may have changed since.
    if (directory.children !== undefined) return directory.children;
    const now = Date.now();
    directory.children = new Map(
      entries.map(([name, kind, hash, size]): [string, LazyNode] => [
        name,
        kind === 'd'
          ? unloadedDir(hash, now)
          : { kind: 'file', hash, bytes: undefined, size, version: ++this.#clock, modifiedAt: now, mimeType: guessMimeType(name) },
      ]),
    );
    return directory.children;
  }

  async #lookup(path: string): Promise<LazyNode | undefined> {
    let node: LazyNode = this.#tree;
    for (const name of splitPath(path)) {
      if (node.kind !== 'dir') return undefined;
      const next: LazyNode | undefined = (await this.#children(node)).get(name);
      if (next === undefined) return undefined;
      node = next;
    }
    return node;
  }

  async #node(path: string): Promise<LazyNode> {
    const node = await this.#lookup(path);
    if (node === undefined) throw codeError('ENOENT', path);
    return node;
  }

  async #file(path: string): Promise<LazyFile> {
    const node = await this.#node(path);
    if (node.kind === 'dir') throw codeError('EISDIR', path);
    return node;
  }

  /**
   * The loaded directory at `names`. `forWrite` marks every directory on the way as changed (its manifest
   * must be rewritten); `create` makes missing ones.
   */
  async #directory(names: string[], forWrite: boolean, create = false): Promise<LazyDir> {
    let directory = this.#tree;
    const now = Date.now();
    await this.#children(directory);
    if (forWrite) touch(directory, now);
    for (const [index, name] of names.entries()) {
      const children = await this.#children(directory);
      let next = children.get(name);
      if (next === undefined && create) {
        next = emptyDir(now);
        children.set(name, next);
      }
      if (next === undefined) throw codeError('ENOENT', names.slice(0, index + 1).join('/'));
      if (next.kind !== 'dir') throw codeError('ENOTDIR', names.slice(0, index + 1).join('/'));
      directory = next;
      await this.#children(directory);
      if (forWrite) touch(directory, now);
    }
    return directory;
  }

  async #bytes(file: LazyFile, path: string): Promise<Uint8Array> {
    if (file.bytes !== undefined) return file.bytes;
    const bytes = await this.blobs.get(file.hash as string);
    if (bytes === undefined) throw new SnapshotError(`the content of ${path} (blob ${file.hash}) is missing from the blob store`);
    return bytes;
  }
}

/**
 * The snapshot record of the tree a root manifest names, as a `BlobTreeDriver`'s snapshots are: any
 * workspace over the blob store holding it can read it (e.g. a stored session's base, as a `from`).
 */
export function blobTreeSnapshot(root: string, tag?: string): WorkspaceSnapshot {
  const record: WorkspaceSnapshot = {
    id: randomUUID(),
    backend: 'memory',
    ref: `${REF_PREFIX}${root}`,
    createdAt: new Date().toISOString(),
    root: '/',
  };
  if (tag !== undefined) record.tag = tag;
  return record;
}

/** Snapshots of a `BlobTreeDriver`: records carry the root manifest hash, valid wherever the blobs are. */
class BlobTreeSnapshotter implements Snapshotter {
  readonly #driver: BlobTreeDriver;
  /** One reader for every tree this workspace opens, so `patch` and diffs skip unchanged directories by hash. */
  readonly #reader: TreeReader<string>;

  constructor(driver: BlobTreeDriver) {
    this.#driver = driver;
    this.#reader = manifestReader(driver.blobs);
  }

  /** A snapshot's tree, or the live state's (captured into the blob store first): what `patch` reads. */
  async open(snapshot?: WorkspaceSnapshot): Promise<SnapshotTree> {
    const root = snapshot === undefined ? (await this.#driver.capture()).root : this.#rootOf(snapshot);
    return snapshotTree(root, this.#reader);
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const { root } = await this.#driver.capture();
    return blobTreeSnapshot(root, options.tag);
  }

  async restore(snapshot: WorkspaceSnapshot): Promise<RestoreResult> {
    await this.#driver.replaceRoot(this.#rootOf(snapshot));
    return { skipped: [] };
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot): Promise<DiffEntry[]> {
    const right = to === undefined ? (await this.#driver.capture()).root : this.#rootOf(to);
    const entries: DiffEntry[] = [];
    await diffManifests(this.#driver.blobs, '', this.#rootOf(from), right, entries);
    return sortDiff(entries);
  }

  #rootOf(record: WorkspaceSnapshot): string {
    if (record.backend !== this.#driver.name || !record.ref.startsWith(REF_PREFIX))
      throw new SnapshotRestoreError(`snapshot ${record.id} is not a content-addressed ${this.#driver.name} snapshot`);
    const root = record.ref.slice(REF_PREFIX.length);
    if (!/^[0-9a-f]{64}$/.test(root)) throw new SnapshotRestoreError(`snapshot ${record.id} has a malformed ref`);
    return root;
  }
}

function emptyDir(now = Date.now()): LazyDir {
  return { kind: 'dir', hash: undefined, children: new Map(), modifiedAt: now };
}

function unloadedDir(hash: string, now = Date.now()): LazyDir {
  return { kind: 'dir', hash, children: undefined, modifiedAt: now };
}

function touch(directory: LazyDir, now: number): void {
  directory.hash = undefined;
  directory.modifiedAt = now;
}

function cloneNode(node: LazyNode, nextVersion: () => number): LazyNode {
  if (node.kind === 'file') return { ...node, version: nextVersion(), modifiedAt: Date.now() };
  if (node.hash !== undefined) return unloadedDir(node.hash);
  const children = new Map([...(node.children as Map<string, LazyNode>)].map(([name, child]) => [name, cloneNode(child, nextVersion)]));
  return { kind: 'dir', hash: undefined, children, modifiedAt: Date.now() };
}
