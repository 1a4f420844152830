import type {
  BackendDriver,
  BlobStore,
  DriverEntryKind,
  DriverListEntry,
  DriverStat,
  DriverWalkEntry,
  DriverWriteOptions,
  Snapshotter,
} from '../workspace/driver.js';
import { NotADirectoryError, SnapshotError, SnapshotRestoreError } from '../workspace/errors.js';
import { NotLoaded, resolveLinksLoading, type LinkTree, type ResolvedPath } from '../workspace/links.js';
import { guessMimeType } from '../workspace/mime.js';
import { joinPath, splitPath } from '../workspace/paths.js';
import { encodeManifest, readManifest, sha256, type ManifestEntry } from '../snapshots/manifest.js';
import { BlobTreeSnapshotter } from './blob-tree-snapshotter.js';
import {
  cloneNode,
  driverKind,
  emptyDir,
  leafEntry,
  newLink,
  nodeOf,
  touch,
  unloadedDir,
  type LazyDir,
  type LazyFile,
  type LazyLink,
  type LazyNode,
} from './lazy-tree.js';

/** What a capture produced: the root manifest, and every blob it stored or referenced anew. */
export interface Capture {
  root: string;
  /** Hashes of the files and manifests that changed since the previous capture (what a publish uploads). */
  fresh: string[];
}

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
 * is how a session resumes on another machine. Files carry git's executable bit and symlinks their target
 * text (a blob, read the first time the link is followed), both held in the manifests; every primitive
 * follows links only inside the tree (`resolveLinks`).
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
  /** The tree as `resolveLinks` walks it, loading directories and link targets on the way. */
  readonly #links: LinkTree<LazyNode>;

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
    const tree = (): LazyDir => this.#tree;
    this.#links = {
      get root() {
        return tree();
      },
      child: (directory, name) => {
        if (directory.kind !== 'dir') return undefined;
        if (directory.children === undefined) throw new NotLoaded(this.#children(directory));
        return directory.children.get(name);
      },
      kind: driverKind,
      target: (node) => {
        if (node.kind !== 'link') return '';
        if (node.target === undefined) throw new NotLoaded(this.#target(node, ''));
        return node.target;
      },
    };
  }

  async readFile(path: string, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    const file = await this.#file(path);
    const bytes = await this.#bytes(file, path);
    const end = range.length === undefined ? bytes.byteLength : range.offset + range.length;
    // A view, never changed in place: the shared layer copies before a caller sees it.
    return { content: bytes.subarray(range.offset, end), sizeBytes: bytes.byteLength };
  }

  async writeFile(path: string, bytes: Uint8Array, options: DriverWriteOptions): Promise<void> {
    // Through a link: its target (a dangling link's target is created, in a directory that exists).
    const { parent, name } = await this.#parentOf((await this.#resolve(path, true)).path);
    const existing = parent.children?.get(name);
    if (existing?.kind === 'dir') throw codeError('EISDIR', path);
    if (existing?.kind === 'link') throw codeError('EEXIST', path);
    let content = bytes; // the shared layer's copy, nobody else's: kept as it is
    if (options.mode === 'append' && existing !== undefined) {
      const before = await this.#bytes(existing, path);
      content = new Uint8Array(before.byteLength + bytes.byteLength);
      content.set(before);
      content.set(bytes, before.byteLength);
    }
    const file: LazyFile = {
      kind: 'file',
      hash: undefined,
      bytes: content,
      size: content.byteLength,
      version: ++this.#clock,
      modifiedAt: Date.now(),
      mimeType: options.mimeType ?? existing?.mimeType ?? guessMimeType(name),
      executable: options.executable ?? existing?.executable ?? false,
    };
    (parent.children as Map<string, LazyNode>).set(name, file);
  }

  /** A mode change git records: a new version; the bytes (and their blob) stay. */
  async setExecutable(path: string, executable: boolean): Promise<void> {
    const { parent, name } = await this.#parentOf((await this.#resolve(path, true)).path);
    const existing = parent.children?.get(name);
    if (existing === undefined) throw codeError('ENOENT', path);
    if (existing.kind !== 'file') throw codeError('EISDIR', path);
    (parent.children as Map<string, LazyNode>).set(name, { ...existing, executable, version: ++this.#clock, modifiedAt: Date.now() });
  }

  async symlink(target: string, path: string): Promise<void> {
    const { parent, name } = await this.#parentOf((await this.#resolve(path, false)).path);
    if (parent.children?.has(name) === true) throw codeError('EEXIST', path);
    (parent.children as Map<string, LazyNode>).set(name, newLink(target));
  }

  async readlink(path: string): Promise<string> {
    const node = (await this.#resolve(path, false)).node;
    if (node === undefined) throw codeError('ENOENT', path);
    if (node.kind !== 'link') throw codeError('EINVAL', path);
    return this.#target(node, path);
  }

  /** The real path an access to `path` reaches, links followed inside the tree (a missing tail kept as given). */
  async resolve(path: string): Promise<string> {
    return (await this.#resolve(path, true)).path;
  }

  /** Undefined below a file, as for a missing path (the shared layer says ENOTDIR where it matters). */
  async kind(path: string): Promise<DriverEntryKind | undefined> {
    try {
      const node = (await this.#resolve(path, false)).node;
      return node === undefined ? undefined : driverKind(node);
    } catch (error) {
      if (error instanceof NotADirectoryError) return undefined;
      throw error;
    }
  }

  async stat(path: string): Promise<DriverStat> {
    const own = (await this.#resolve(path, false)).node;
    if (own === undefined) throw codeError('ENOENT', path);
    const isSymlink = own.kind === 'link';
    const node = isSymlink ? (await this.#resolve(path, true)).node : own;
    if (node === undefined || node.kind === 'link') {
      // Dangling (inside the root): the link itself.
      return { isFile: false, isDirectory: false, isSymlink, sizeBytes: 0, modifiedAt: new Date(own.modifiedAt) };
    }
    const modifiedAt = new Date(node.modifiedAt);
    if (node.kind === 'dir') return { isFile: false, isDirectory: true, isSymlink, sizeBytes: 0, modifiedAt };
    const stat: DriverStat = {
      isFile: true,
      isDirectory: false,
      isSymlink,
      executable: node.executable,
      sizeBytes: node.size,
      modifiedAt,
      version: node.version,
    };
    if (node.mimeType !== undefined) stat.mimeType = node.mimeType;
    return stat;
  }

  async list(path: string): Promise<DriverListEntry[]> {
    const node = (await this.#resolve(path, true)).node;
    if (node === undefined) throw codeError('ENOENT', path);
    if (node.kind !== 'dir') throw codeError('ENOTDIR', path);
    return [...(await this.#children(node))].map(([name, child]) => ({ name, kind: driverKind(child) }));
  }

  async *walk(base: string): AsyncIterable<DriverWalkEntry> {
    const start = (await this.#resolve(base, true)).node;
    if (start === undefined || start.kind !== 'dir') return;
    const pending: [string, LazyDir][] = [[base, start]];
    while (pending.length > 0) {
      const [directoryPath, directory] = pending.pop() as [string, LazyDir];
      for (const [name, child] of await this.#children(directory)) {
        const childPath = joinPath(directoryPath, name);
        yield { path: childPath, kind: driverKind(child) };
        if (child.kind === 'dir') pending.push([childPath, child]);
      }
    }
  }

  async mkdir(path: string): Promise<void> {
    await this.#directory(splitPath((await this.#resolve(path, true)).path), true, true);
  }

  async remove(path: string): Promise<void> {
    const { parent, name } = await this.#parentOf((await this.#resolve(path, false)).path);
    parent.children?.delete(name);
  }

  /** O(1): the subtree moves with its hashes, so an unchanged directory stays unloaded and is never re-stored. */
  async move(from: string, to: string): Promise<void> {
    const source = await this.#found(from);
    const target = await this.#parentOf((await this.#resolve(to, false)).path);
    const { parent, name } = await this.#parentOf(source.path);
    parent.children?.delete(name);
    (target.parent.children as Map<string, LazyNode>).set(target.name, source.node);
  }

  /** A clean directory is copied as its manifest hash (O(1), loaded lazily); files share their bytes or hash. */
  async copy(from: string, to: string): Promise<void> {
    const { node } = await this.#found(from);
    const target = await this.#parentOf((await this.#resolve(to, false)).path);
    (target.parent.children as Map<string, LazyNode>).set(
      target.name,
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

  /** Every blob captures stored or found stored since the last `published()`, with its bytes. */
  unpublished(): Map<string, Uint8Array> {
    return new Map(this.#unpublished);
  }

  /** Forgets the blobs a successful publish made reachable. */
  published(hashes: Iterable<string>): void {
    for (const hash of hashes) this.#unpublished.delete(hash);
  }

  // ---- capture ------------------------------------------------------------------------------------------

  async #store(directory: LazyDir, fresh: string[]): Promise<string> {
    if (directory.hash !== undefined) return directory.hash;
    const entries: ManifestEntry[] = [];
    for (const [name, child] of directory.children as Map<string, LazyNode>) {
      if (child.kind === 'dir') entries.push([name, 'd', await this.#store(child, fresh), 0]);
      else {
        if (child.kind === 'file' && child.hash === undefined) {
          child.hash = await this.#put(child.bytes as Uint8Array, fresh);
          child.bytes = undefined;
        }
        if (child.kind === 'link' && child.hash === undefined) child.hash = await this.#put(Buffer.from(child.target as string), fresh);
        entries.push(leafEntry(name, child));
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

  // ---- tree access --------------------------------------------------------------------------------------

  async #children(directory: LazyDir): Promise<Map<string, LazyNode>> {
    if (directory.children !== undefined) return directory.children;
    const entries = await readManifest(this.blobs, directory.hash as string);
    // Another call may have loaded it while this one waited: keep the first, it may have changed since.
    if (directory.children !== undefined) return directory.children;
    const now = Date.now();
    const version = () => ++this.#clock;
    directory.children = new Map(entries.map((entry): [string, LazyNode] => [entry[0], nodeOf(entry, version, now)]));
    return directory.children;
  }

  /** A link's target text, read from its blob the first time. */
  async #target(link: LazyLink, path: string): Promise<string> {
    if (link.target !== undefined) return link.target;
    const bytes = await this.blobs.get(link.hash as string);
    if (bytes === undefined) throw new SnapshotError(`the target of the link ${path} (blob ${link.hash}) is missing from the blob store`);
    link.target = new TextDecoder().decode(bytes);
    return link.target;
  }

  /** Where `path` leads, its links followed inside the tree (the final one only when `followFinal`). */
  #resolve(path: string, followFinal: boolean): Promise<ResolvedPath<LazyNode>> {
    return resolveLinksLoading(this.#links, path, followFinal);
  }

  /** The entry at `path` itself (a final link not followed) and its real path. */
  async #found(path: string): Promise<{ path: string; node: LazyNode }> {
    const resolved = await this.#resolve(path, false);
    if (resolved.node === undefined) throw codeError('ENOENT', path);
    return { path: resolved.path, node: resolved.node };
  }

  async #file(path: string): Promise<LazyFile> {
    const node = (await this.#resolve(path, true)).node;
    if (node === undefined || node.kind === 'link') throw codeError('ENOENT', path);
    if (node.kind === 'dir') throw codeError('EISDIR', path);
    return node;
  }

  /** The loaded, changed-marked directory holding the real path `real`, and the entry's name in it. */
  async #parentOf(real: string): Promise<{ parent: LazyDir; name: string }> {
    const names = splitPath(real);
    const name = names.pop() as string;
    return { parent: await this.#directory(names, true), name };
  }

  /**
   * The loaded directory at `names` (a real path: no link on it). `forWrite` marks every directory on the
   * way as changed (its manifest must be rewritten); `create` makes missing ones.
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
