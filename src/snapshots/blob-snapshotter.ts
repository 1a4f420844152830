import { randomUUID } from 'node:crypto';
import type { BackendDriver, BlobStore, DriverEntryKind, Snapshotter, SnapshotTree } from '../workspace/driver.js';
import { snapshotTree, type TreeReader } from './snapshot-tree.js';
import { SnapshotError, SnapshotRestoreError, WorkspaceError } from '../workspace/errors.js';
import { NotLoaded, resolveLinksLoading, type LinkTree } from '../workspace/links.js';
import { compareStrings } from '../workspace/paths.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';
import { joinPath, pathDepth, relativeTo, splitPath, parentPath } from '../workspace/paths.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot } from '../workspace/types.js';
import { memoryBlobStore } from './blob-store.js';
import {
  diffManifests,
  encodeManifest,
  fileKind,
  manifestReader,
  putBlob,
  readManifest,
  type LeafKind,
  type ManifestEntry,
} from './manifest.js';
import { sortDiff } from './record.js';

/** A file (`f`, `x`) or a link (`l`): its manifest kind, the blob of its bytes or target, their size. */
interface LeafNode {
  kind: 'leaf';
  mode: LeafKind;
  hash: string;
  size: number;
}

interface DirNode {
  kind: 'dir';
  children: Map<string, LeafNode | DirNode>;
  /** Manifest hash; undefined when something below changed since it was computed. */
  hash: string | undefined;
}

const REF_PREFIX = 'sha256:';
const newDir = (): DirNode => ({ kind: 'dir', children: new Map(), hash: undefined });

/**
 * The snapshotter `createWorkspace` gives a driver that has none: content-addressed blobs. A file's bytes
 * are stored under their sha256; a directory is a canonical manifest (sorted `[name, kind, hash, size]`
 * lines) stored the same way, so a snapshot is the hash of its root manifest and unchanged subtrees are
 * shared between snapshots.
 *
 * Cost follows change: the first snapshot reads every file; after that, only paths the protocol changed
 * (the shared layer reports each mutation through `changed`) are read again and only manifests above them
 * rewritten. So the driver's storage must be written through the workspace only; a backend that others
 * write too brings its own `snapshots`. Held: file bytes and directories, empty ones included, and, for a
 * driver with the optional primitives, executable bits (`stat().executable`, restored with `setExecutable`
 * or a write's `executable`) and symlinks (`readlink`, restored with `symlink`). A driver without them has
 * no kinds, and nothing of this costs it anything.
 *
 * A write through a link changes the link's target, while the shared layer reports the path as written:
 * a reported path with a link on its way (known from the last capture, or any of it changed since) is
 * resolved through the driver right away, and its real path re-read at the next capture too.
 *
 * A record belongs to the instance that took it (its id is remembered), as memory snapshots do.
 */
export class BlobSnapshotter implements Snapshotter {
  readonly #driver: BackendDriver;
  readonly #blobs: BlobStore;
  /** Snapshot id → root manifest hash, for the records this instance took. */
  readonly #taken = new Map<string, string>();
  /** What the last capture or restore saw; undefined until the first one, or after a failure. */
  #mirror: DirNode | undefined;
  #dirty = new Set<string>();
  /** Real paths of reported paths that may lead through a link, being resolved. */
  #resolving: Promise<string | undefined>[] = [];

  constructor(driver: BackendDriver, blobs: BlobStore = memoryBlobStore()) {
    this.#driver = driver;
    this.#blobs = blobs;
    this.#reader = manifestReader(blobs);
  }

  changed(paths: readonly string[]): void {
    for (const path of paths) {
      if (this.#driver.readlink !== undefined && this.#mirror !== undefined && this.#mayLeadElsewhere(path))
        this.#resolving.push(this.#realPath(path));
      this.#dirty.add(path);
    }
  }

  /**
   * Whether a link may lie on the way to `path`: one did at the last capture, or a path on the way (the
   * path itself included) was reported changed since then. Otherwise the path is its own real path.
   */
  #mayLeadElsewhere(path: string): boolean {
    let node: LeafNode | DirNode | undefined = this.#mirror;
    let prefix = '';
    for (const name of splitPath(path)) {
      prefix = joinPath(prefix, name);
      if (this.#dirty.has(prefix)) return true;
      node = node?.kind === 'dir' ? node.children.get(name) : undefined;
      if (node?.kind === 'leaf' && node.mode === 'l') return true;
    }
    return false;
  }

  /** Where `path` leads now, its links followed through the driver; undefined when it leads nowhere else. */
  async #realPath(path: string): Promise<string | undefined> {
    const driver = this.#driver;
    const seen = new Map<string, { kind: DriverEntryKind | undefined; target: string }>([['', { kind: 'directory', target: '' }]]);
    const look = async (at: string): Promise<void> => {
      const kind = await driver.kind(at).catch(() => undefined);
      seen.set(at, { kind, target: kind === 'symlink' ? await (driver.readlink as (path: string) => Promise<string>)(at) : '' });
    };
    const tree: LinkTree<string> = {
      root: '',
      child: (directory, name) => {
        const at = joinPath(directory, name);
        const known = seen.get(at);
        if (known === undefined) throw new NotLoaded(look(at));
        return known.kind === undefined ? undefined : at;
      },
      kind: (at) => seen.get(at)?.kind ?? 'file',
      target: (at) => seen.get(at)?.target ?? '',
    };
    try {
      const real = (await resolveLinksLoading(tree, path, true)).path;
      return real === path ? undefined : real;
    } catch {
      return undefined; // a link leading out, a loop: nothing was written through it
    }
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const root = await this.#capture(LongCall.start(options, 'snapshot'));
    const id = randomUUID();
    this.#taken.set(id, root);
    const record: WorkspaceSnapshot = {
      id,
      backend: this.#driver.name,
      ref: `${REF_PREFIX}${root}`,
      createdAt: new Date().toISOString(),
      root: this.#driver.root ?? '/',
    };
    if (options.tag !== undefined) record.tag = options.tag;
    return record;
  }

  /** Abortable while it reads the live state (phase `capture`); once it writes (phase `apply`) it completes. */
  async restore(snapshot: WorkspaceSnapshot, options?: LongCallOptions): Promise<RestoreResult> {
    const target = this.#rootOf(snapshot);
    const call = LongCall.start(options, 'restore');
    const live = await this.#capture(call);
    if (live === target) return { skipped: [] };
    call.check();
    try {
      await this.#apply('', this.#mirror as DirNode, target, call);
      call.settle();
      this.#mirror = await this.#load(target);
    } catch (error) {
      this.#mirror = undefined;
      const code = error instanceof WorkspaceError ? error.code : ((error as { code?: string }).code ?? 'error');
      throw new SnapshotRestoreError(`restore failed part way (${code}); the next snapshot reads the workspace again`);
    }
    return { skipped: [] };
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<DiffEntry[]> {
    const left = this.#rootOf(from);
    const right = to === undefined ? await this.#capture(LongCall.start(options, 'diff')) : this.#rootOf(to);
    const entries: DiffEntry[] = [];
    await diffManifests(this.#blobs, '', left, right, entries);
    return sortDiff(entries);
  }

  async open(snapshot?: WorkspaceSnapshot, options?: LongCallOptions): Promise<SnapshotTree> {
    const root = snapshot === undefined ? await this.#capture(LongCall.start(options, 'snapshotTree')) : this.#rootOf(snapshot);
    return snapshotTree(root, this.#reader);
  }

  /** Manifests read as a snapshot tree; one reader per instance, so two trees compare by hash. */
  readonly #reader: TreeReader<string>;

  async dispose(): Promise<void> {
    this.#taken.clear();
    this.#mirror = undefined;
    this.#resolving = [];
  }

  #rootOf(record: WorkspaceSnapshot): string {
    if (record.backend !== this.#driver.name)
      throw new SnapshotRestoreError(
        `snapshot ${record.id} belongs to a ${record.backend} workspace, not this ${this.#driver.name} workspace`,
      );
    const root = this.#taken.get(record.id);
    if (root === undefined || record.ref !== `${REF_PREFIX}${root}`)
      throw new SnapshotRestoreError(`snapshot ${record.id} was not taken by this workspace (or the workspace was disposed)`);
    return root;
  }

  // ---- capture ------------------------------------------------------------------------------------------

  /**
   * Brings the mirror up to date (everything the first time, then the changed paths) and returns the root
   * hash. Each file read is a unit of progress (phase `capture`, reported at the bounded rate of
   * `LongCall.unit`); an abort stops it between files.
   */
  async #capture(call: LongCall): Promise<string> {
    const resolving = this.#resolving.splice(0);
    const dirty = [...this.#dirty];
    this.#dirty = new Set();
    try {
      for (const real of await Promise.all(resolving)) if (real !== undefined) dirty.push(real);
      dirty.sort(compareStrings);
      if (this.#mirror === undefined) this.#mirror = await this.#scanDirectory('', call);
      else {
        let covered: string | undefined;
        for (const path of dirty) {
          if (covered !== undefined && (covered === '' || path.startsWith(`${covered}/`))) continue;
          await this.#refresh(this.#mirror, path, call);
          covered = path;
        }
      }
      call.settle();
      return await this.#hashDirectory(this.#mirror);
    } catch (error) {
      this.#mirror = undefined;
      if (call.signal?.aborted === true) throw call.signal.reason;
      const code = error instanceof WorkspaceError ? error.code : ((error as { code?: string }).code ?? 'error');
      throw new SnapshotError(`cannot read the workspace or store its snapshot (${code})`);
    }
  }

  /** Re-examines `path` (and clears the manifest hashes above it). */
  async #refresh(mirror: DirNode, path: string, call: LongCall): Promise<void> {
    if (path === '') {
      this.#mirror = await this.#scanDirectory('', call);
      return;
    }
    const names = splitPath(path);
    let directory = mirror;
    for (let index = 0; index < names.length; index += 1) {
      const name = names[index] as string;
      directory.hash = undefined;
      const node = directory.children.get(name);
      if (index < names.length - 1 && node?.kind === 'dir') {
        directory = node;
        continue;
      }
      // Where the mirror stops matching (or the path itself), look at the entry as it is now.
      const fresh = await this.#examine(names.slice(0, index + 1).join('/'), call);
      if (fresh === undefined) directory.children.delete(name);
      else directory.children.set(name, fresh);
      return;
    }
  }

  async #examine(path: string, call: LongCall): Promise<LeafNode | DirNode | undefined> {
    let kind;
    try {
      kind = await this.#driver.kind(path);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    }
    if (kind === 'file') return this.#storeFile(path, call);
    if (kind === 'directory') return this.#scanDirectory(path, call);
    if (kind === 'symlink' && this.#driver.readlink !== undefined) return this.#storeLink(path);
    return undefined;
  }

  async #scanDirectory(base: string, call: LongCall): Promise<DirNode> {
    const root = newDir();
    const entries: { path: string; kind: string }[] = [];
    for await (const entry of this.#driver.walk(base)) entries.push(entry);
    entries.sort((a, b) => pathDepth(a.path) - pathDepth(b.path));
    const directories = new Map<string, DirNode>([['', root]]);
    for (const entry of entries) {
      const relative = relativeTo(entry.path, base);
      const parent = directories.get(parentPath(relative));
      if (parent === undefined) continue; // below something that is not a directory (a link)
      const name = splitPath(relative).pop() as string;
      if (entry.kind === 'directory') {
        const directory = newDir();
        directories.set(relative, directory);
        parent.children.set(name, directory);
      } else if (entry.kind === 'file') {
        parent.children.set(name, await this.#storeFile(entry.path, call));
      } else if (entry.kind === 'symlink' && this.#driver.readlink !== undefined) {
        parent.children.set(name, await this.#storeLink(entry.path));
      }
    }
    return root;
  }

  async #storeFile(path: string, call: LongCall): Promise<LeafNode> {
    const { content } = await this.#driver.readFile(path, { offset: 0 });
    // Only a driver that can set the bit can have it: the others cost no stat.
    const executable = this.#driver.setExecutable !== undefined && (await this.#driver.stat(path)).executable === true;
    call.unit('capture', path);
    return { kind: 'leaf', mode: fileKind(executable), hash: await this.#put(content), size: content.byteLength };
  }

  /** A link: its target text stored as a blob, as git stores it. */
  async #storeLink(path: string): Promise<LeafNode> {
    const target = new TextEncoder().encode(await (this.#driver.readlink as (path: string) => Promise<string>)(path));
    return { kind: 'leaf', mode: 'l', hash: await this.#put(target), size: target.byteLength };
  }

  async #put(bytes: Uint8Array): Promise<string> {
    return putBlob(this.#blobs, bytes);
  }

  async #hashDirectory(directory: DirNode): Promise<string> {
    if (directory.hash !== undefined) return directory.hash;
    const entries: ManifestEntry[] = [];
    for (const [name, child] of directory.children) {
      entries.push(child.kind === 'dir' ? [name, 'd', await this.#hashDirectory(child), 0] : [name, child.mode, child.hash, child.size]);
    }
    directory.hash = await this.#put(encodeManifest(entries));
    return directory.hash;
  }

  // ---- reading snapshots --------------------------------------------------------------------------------

  async #manifest(hash: string): Promise<ManifestEntry[]> {
    return readManifest(this.#blobs, hash);
  }

  async #blob(hash: string): Promise<Uint8Array> {
    const bytes = await this.#blobs.get(hash);
    if (bytes === undefined) throw new SnapshotRestoreError(`the snapshot's blob ${hash} is missing from the blob store`);
    return bytes;
  }

  async #load(hash: string): Promise<DirNode> {
    const directory: DirNode = { kind: 'dir', children: new Map(), hash };
    for (const [name, kind, childHash, size] of await this.#manifest(hash)) {
      directory.children.set(name, kind === 'd' ? await this.#load(childHash) : { kind: 'leaf', mode: kind, hash: childHash, size });
    }
    return directory;
  }

  /** Rewrites what differs between the live directory `live` at `path` and the manifest `hash`. */
  async #apply(path: string, live: DirNode, hash: string, call: LongCall): Promise<void> {
    if (live.hash === hash) return;
    const wanted = await this.#manifest(hash);
    const names = new Set(wanted.map((entry) => entry[0]));
    for (const [name, node] of live.children) {
      if (!names.has(name)) await this.#driver.remove(joinPath(path, name), { recursive: node.kind === 'dir' });
    }
    for (const [name, kind, childHash] of wanted) {
      const childPath = joinPath(path, name);
      const current = live.children.get(name);
      if (kind !== 'd') {
        if (current?.kind === 'leaf' && current.hash === childHash && current.mode === kind) continue;
        await this.#putLeaf(childPath, current, kind, childHash);
        call.unit('apply', childPath, true);
        continue;
      }
      if (current?.kind === 'leaf') await this.#driver.remove(childPath, { recursive: false });
      if (current?.kind === 'dir') await this.#apply(childPath, current, childHash, call);
      else {
        await this.#driver.mkdir(childPath);
        await this.#apply(childPath, newDir(), childHash, call);
      }
    }
  }

  /** Makes the live entry at `path` the file or link `kind`/`hash` (what is there now: `current`). */
  async #putLeaf(path: string, current: LeafNode | DirNode | undefined, kind: LeafKind, hash: string): Promise<void> {
    const driver = this.#driver;
    const isFile = (mode: LeafKind): boolean => mode !== 'l';
    // The same bytes under the other mode: only the bit changes.
    if (current?.kind === 'leaf' && current.hash === hash && isFile(current.mode) && isFile(kind) && driver.setExecutable !== undefined) {
      await driver.setExecutable(path, kind === 'x');
      return;
    }
    // A write would follow a link standing there, and a directory refuses it: either goes first.
    if (current !== undefined && (current.kind === 'dir' || current.mode === 'l' || kind === 'l'))
      await driver.remove(path, { recursive: current.kind === 'dir' });
    const bytes = await this.#blob(hash);
    if (kind === 'l') {
      if (driver.symlink === undefined) throw new SnapshotRestoreError(`the ${driver.name} backend cannot create the link ${path}`);
      await driver.symlink(new TextDecoder().decode(bytes), path);
      return;
    }
    const executable = driver.setExecutable === undefined ? {} : { executable: kind === 'x' };
    await driver.writeFile(path, bytes, { mode: 'overwrite', ...executable });
  }
}
