import { randomUUID } from 'node:crypto';
import type { BackendDriver, BlobStore, Snapshotter, SnapshotTree } from '../workspace/driver.js';
import { snapshotTree, type TreeReader } from './snapshot-tree.js';
import { SnapshotError, SnapshotRestoreError, WorkspaceError } from '../workspace/errors.js';
import { compareStrings } from '../workspace/paths.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';
import { joinPath, pathDepth, relativeTo, splitPath, parentPath } from '../workspace/paths.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, WorkspaceSnapshot } from '../workspace/types.js';
import { memoryBlobStore } from './blob-store.js';
import { diffManifests, encodeManifest, manifestReader, putBlob, readManifest, type ManifestEntry } from './manifest.js';
import { sortDiff } from './record.js';

interface FileNode {
  kind: 'file';
  hash: string;
  size: number;
}

interface DirNode {
  kind: 'dir';
  children: Map<string, FileNode | DirNode>;
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
 * write too brings its own `snapshots`. Held: file bytes and directories, empty ones included. Symlinks
 * and permission bits are outside what the driver primitives express, so they are not held.
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

  constructor(driver: BackendDriver, blobs: BlobStore = memoryBlobStore()) {
    this.#driver = driver;
    this.#blobs = blobs;
    this.#reader = manifestReader(blobs);
  }

  changed(paths: readonly string[]): void {
    for (const path of paths) this.#dirty.add(path);
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
    const dirty = [...this.#dirty].sort(compareStrings);
    this.#dirty = new Set();
    try {
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

  async #examine(path: string, call: LongCall): Promise<FileNode | DirNode | undefined> {
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
      if (parent === undefined) continue; // below something that is not held (a link)
      const name = splitPath(relative).pop() as string;
      if (entry.kind === 'directory') {
        const directory = newDir();
        directories.set(relative, directory);
        parent.children.set(name, directory);
      } else if (entry.kind === 'file') {
        parent.children.set(name, await this.#storeFile(entry.path, call));
      }
    }
    return root;
  }

  async #storeFile(path: string, call: LongCall): Promise<FileNode> {
    const { content } = await this.#driver.readFile(path, { offset: 0 });
    call.unit('capture', path);
    return { kind: 'file', hash: await this.#put(content), size: content.byteLength };
  }

  async #put(bytes: Uint8Array): Promise<string> {
    return putBlob(this.#blobs, bytes);
  }

  async #hashDirectory(directory: DirNode): Promise<string> {
    if (directory.hash !== undefined) return directory.hash;
    const entries: ManifestEntry[] = [];
    for (const [name, child] of directory.children) {
      entries.push(child.kind === 'dir' ? [name, 'd', await this.#hashDirectory(child), 0] : [name, 'f', child.hash, child.size]);
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
      directory.children.set(name, kind === 'd' ? await this.#load(childHash) : { kind: 'file', hash: childHash, size });
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
      if (kind === 'f') {
        if (current?.kind === 'file' && current.hash === childHash) continue;
        if (current?.kind === 'dir') await this.#driver.remove(childPath, { recursive: true });
        await this.#driver.writeFile(childPath, await this.#blob(childHash), { mode: 'overwrite' });
        call.unit('apply', childPath, true);
        continue;
      }
      if (current?.kind === 'file') await this.#driver.remove(childPath, { recursive: false });
      if (current?.kind === 'dir') await this.#apply(childPath, current, childHash, call);
      else {
        await this.#driver.mkdir(childPath);
        await this.#apply(childPath, newDir(), childHash, call);
      }
    }
  }
}
