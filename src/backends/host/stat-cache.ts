import * as fs from 'node:fs';
import { escapeName, EMPTY_DIR_MARKER } from './git/names.js';
import { GitStore, type TreeEntry, type TreeMode } from './git/store.js';
import { isTempName, isVisibleName } from '../../host-files/names.js';
import { TimeSlices } from '../../workspace/time-slices.js';
import { pinChild, pinDirectory, Sandbox, type PinnedDir } from '../../host-files/sandbox.js';

/**
 * The host backend's stat cache: an in-memory mirror of the tree the last snapshot (or restore) recorded,
 * holding for every file and link its blob id, git mode and the stat data seen when it was hashed, and for
 * every directory its tree id (cleared when anything below changes). It plays the role of git's index.
 *
 * - `scan` walks the root with synchronous `readdir`/`lstat` (measured ~4x faster than promise-based calls
 *   for this many tiny syscalls) and re-hashes only entries whose stat data (mtime, ctime, size, inode,
 *   mode) changed, or that were "racy" when last hashed: modified within a timestamp tick of the scan, when
 *   a later same-size edit could leave every stat field equal. Racy entries are simply re-hashed next time.
 * - `refresh(paths)` (tracked mode) looks only at the given paths and the directories on the way to them.
 * - `buildTree` rewrites only trees whose id was cleared; equal subtrees keep their id.
 *
 * Every directory is pinned by descriptor before it is read (see `PinnedDir`), and its entries are reached
 * through the pin: a directory swapped for a link to the outside while the scan runs is never listed or
 * read through, so no outside content can enter a snapshot (and come back into the root on restore).
 */

export interface StatKey {
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  ino: number;
  mode: number;
}

export interface LeafNode {
  kind: 'file' | 'link';
  mode: TreeMode;
  oid: string;
  stat: StatKey;
  /** Re-hash at the next scan whatever the stat data says. */
  racy: boolean;
}

export interface DirNode {
  kind: 'dir';
  children: Map<string, TreeNode>;
  /** Tree id, or undefined when something below changed since it was computed. */
  oid: string | undefined;
}

export type TreeNode = LeafNode | DirNode;

export function newDir(): DirNode {
  return { kind: 'dir', children: new Map(), oid: undefined };
}

export function statKey(st: fs.Stats): StatKey {
  return { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino, mode: st.mode };
}

function sameStat(a: StatKey, b: StatKey | fs.Stats): boolean {
  return a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.size === b.size && a.ino === b.ino && a.mode === b.mode;
}

/**
 * Whether an entry hashed now could be edited again without any stat field changing: its mtime lies within
 * one timestamp tick of the scan. Coarse filesystems (whole seconds, FAT's two) get a wide window; those
 * with sub-second times get the kernel's coarse-clock lag plus margin.
 */
export function isRacy(st: StatKey, scanStartMs: number): boolean {
  const window = st.mtimeMs % 1000 === 0 ? 2_100 : 60;
  return st.mtimeMs >= scanStartMs - window || st.ctimeMs >= scanStartMs - window;
}

const O_NOFOLLOW = fs.constants.O_NOFOLLOW;

export class StatCache {
  /** A first scan of a big root hashes every file (seconds): reads are answered between its slices. */
  readonly #slices = new TimeSlices();
  /** Undefined until the first full scan. */
  tree: DirNode | undefined;
  readonly #sandbox: Sandbox;
  readonly #store: GitStore;
  readonly #excluded: ((rel: string) => boolean) | undefined;
  #emptyBlob: string | undefined;
  /** Files hashed by the last scan or refresh (for tests and the bench). */
  hashed = 0;
  /** Directories a scan or refresh saw temp file names in (hidden): where a restore looks for stale ones. */
  readonly tempNameDirs = new Set<string>();
  /** Told of every entry the scan or refresh under way examines (progress; it may throw to stop the scan). */
  #onEntry: ((rel: string) => void) | undefined;

  constructor(rootAbs: string, store: GitStore, excluded: ((rel: string) => boolean) | undefined) {
    this.#sandbox = new Sandbox(rootAbs);
    this.#store = store;
    this.#excluded = excluded;
  }

  isExcluded(rel: string): boolean {
    return this.#excluded !== undefined && this.#excluded(rel);
  }

  /** The pinned root: throws (the snapshot fails) when the root itself is gone or replaced. */
  #pinRoot(): PinnedDir {
    return pinDirectory(this.#sandbox, '', '');
  }

  /**
   * Runs a scan or refresh telling `onEntry` of each entry examined. When `onEntry` throws (an abort), the
   * scan stops there: the caller then drops the directories' tree ids (`forgetTrees`), which a part-way
   * scan may have left stale.
   */
  async observed<T>(onEntry: ((rel: string) => void) | undefined, work: () => Promise<T>): Promise<T> {
    this.#onEntry = onEntry;
    try {
      return await work();
    } finally {
      this.#onEntry = undefined;
    }
  }

  /** Forgets every directory's tree id (the leaves' blob ids and stat data stay): the next build rewrites the trees. */
  forgetTrees(): void {
    const visit = (node: DirNode): void => {
      node.oid = undefined;
      for (const child of node.children.values()) if (child.kind === 'dir') visit(child);
    };
    if (this.tree !== undefined) visit(this.tree);
  }

  /** Full walk; `force` names paths to re-hash whatever their stat data says. */
  async scan(force: ReadonlySet<string> = new Set()): Promise<void> {
    this.hashed = 0;
    const start = Date.now();
    this.#slices.restart();
    if (this.tree === undefined) this.tree = newDir();
    for (const path of force) this.#markRacy(path);
    const root = this.#pinRoot();
    try {
      await this.#scanDir('', this.tree, start, root);
    } finally {
      root.release();
    }
  }

  /** Tracked mode: re-examine only `paths` (and the directories leading to them). */
  async refresh(paths: Iterable<string>): Promise<void> {
    this.hashed = 0;
    const start = Date.now();
    this.#slices.restart();
    if (this.tree === undefined) {
      await this.scan();
      return;
    }
    const sorted = [...new Set(paths)].sort();
    let previous: string | undefined;
    for (const path of sorted) {
      // A path below one already refreshed as a whole directory is covered.
      if (previous !== undefined && (previous === '' || path.startsWith(`${previous}/`))) continue;
      await this.#refreshPath(path, start);
      previous = path;
    }
  }

  #markRacy(path: string): void {
    const node = this.lookup(path);
    if (node !== undefined && node.kind !== 'dir') node.racy = true;
  }

  lookup(path: string): TreeNode | undefined {
    let node: TreeNode | undefined = this.tree;
    if (path === '') return node;
    for (const name of path.split('/')) {
      if (node === undefined || node.kind !== 'dir') return undefined;
      node = node.children.get(name);
    }
    return node;
  }

  async #refreshPath(path: string, start: number): Promise<void> {
    const tree = this.tree as DirNode;
    let pin = this.#pinRoot();
    try {
      if (path === '') {
        await this.#scanDir('', tree, start, pin);
        return;
      }
      const names = path.split('/');
      let node = tree;
      node.oid = undefined;
      let rel = '';
      for (let index = 0; index < names.length; index += 1) {
        const name = names[index] as string;
        rel = rel === '' ? name : `${rel}/${name}`;
        if (!isVisibleName(name) || this.isExcluded(rel)) return;
        this.#onEntry?.(rel);
        const isLast = index === names.length - 1;
        let st: fs.Stats;
        try {
          st = fs.lstatSync(pin.at(name));
        } catch {
          node.children.delete(name);
          return;
        }
        const existing = node.children.get(name);
        if (st.isDirectory()) {
          const child = tryPinChild(pin, name);
          if (child === undefined) {
            // Swapped for something else just now: leave it out; the next look sees what it became.
            node.children.delete(name);
            return;
          }
          pin.release();
          pin = child;
          if (existing === undefined || existing.kind !== 'dir' || isLast) {
            const dir = existing?.kind === 'dir' ? existing : newDir();
            node.children.set(name, dir);
            // A new directory, or the path itself: compare its whole content (unchanged files are not re-hashed).
            await this.#scanDir(rel, dir, start, pin);
            dir.oid = undefined;
            return;
          }
          existing.oid = undefined;
          node = existing;
          continue;
        }
        // A file or link where the path continues (or ends): the entry itself is what changed.
        if (st.isFile() || st.isSymbolicLink()) {
          const leaf = this.#leaf(pin.at(name), st, undefined, start);
          if (leaf === undefined) node.children.delete(name);
          else node.children.set(name, leaf);
        } else {
          node.children.delete(name);
        }
        return;
      }
    } finally {
      pin.release();
    }
  }

  /** Returns whether `node`'s tree id must be recomputed. */
  async #scanDir(rel: string, node: DirNode, start: number, pin: PinnedDir): Promise<boolean> {
    await this.#slices.turn();
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(pin.path, { withFileTypes: true });
    } catch {
      entries = [];
    }
    let changed = false;
    const seen = new Set<string>();
    for (const dirent of entries) {
      const name = dirent.name;
      if (!isVisibleName(name)) {
        if (isTempName(name)) this.tempNameDirs.add(rel);
        continue;
      }
      const childRel = rel === '' ? name : `${rel}/${name}`;
      if (this.#excluded !== undefined && this.#excluded(childRel)) continue;
      this.#onEntry?.(childRel);
      const existing = node.children.get(name);
      let isDir = dirent.isDirectory();
      let st: fs.Stats | undefined;
      if (!isDir) {
        try {
          // By plain path, deliberately: a lookup through /proc/self/fd costs ~2.5 µs more per entry (about +45% on
          // a 10k-file rescan). The stat only decides dir/file/link and "unchanged"; content is read and
          // directories entered through the pin only, so a parent swapped for a link meanwhile can at worst
          // drop or re-hash this entry, never bring outside content in (a StatKey holds the inode number).
          st = fs.lstatSync(this.#sandbox.abs(childRel));
        } catch {
          continue;
        }
        isDir = st.isDirectory();
      }
      if (isDir) {
        const child = tryPinChild(pin, name);
        // Swapped for a link (or removed) since the listing: left out; the next scan sees what it became.
        if (child === undefined) continue;
        seen.add(name);
        let dir: DirNode;
        if (existing === undefined || existing.kind !== 'dir') {
          dir = newDir();
          node.children.set(name, dir);
          changed = true;
        } else dir = existing;
        try {
          if (await this.#scanDir(childRel, dir, start, child)) changed = true;
        } finally {
          child.release();
        }
        continue;
      }
      const stat = st as fs.Stats;
      if (!stat.isFile() && !stat.isSymbolicLink()) continue; // FIFOs, sockets, devices
      const leaf = this.#leaf(pin.at(name), stat, existing, start);
      if (leaf === undefined) continue;
      seen.add(name);
      if (leaf !== existing) {
        node.children.set(name, leaf);
        if (existing === undefined || existing.kind === 'dir' || existing.oid !== leaf.oid || existing.mode !== leaf.mode) changed = true;
      }
    }
    if (seen.size !== node.children.size) {
      for (const name of [...node.children.keys()]) {
        if (!seen.has(name)) {
          node.children.delete(name);
          changed = true;
        }
      }
    }
    if (changed) node.oid = undefined;
    return node.oid === undefined;
  }

  /** The node for a file or link, re-hashed unless `existing` matches its stat data. */
  #leaf(abs: string, st: fs.Stats, existing: TreeNode | undefined, start: number): LeafNode | undefined {
    const kind = st.isSymbolicLink() ? 'link' : 'file';
    if (existing !== undefined && existing.kind === kind && !existing.racy && sameStat(existing.stat, st)) return existing;
    const key = statKey(st);
    this.hashed += 1;
    if (kind === 'link') {
      let target: Buffer;
      try {
        target = fs.readlinkSync(abs, { encoding: 'buffer' });
      } catch {
        return undefined;
      }
      return { kind, mode: '120000', oid: this.#store.writeObject('blob', target), stat: key, racy: isRacy(key, start) };
    }
    // O_NOFOLLOW: a file swapped for a link since the lstat is not read through; O_NONBLOCK: nor can a FIFO
    // swapped in block the (synchronous) scan forever.
    let fd: number;
    try {
      fd = fs.openSync(abs, fs.constants.O_RDONLY | O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      const opened = fs.fstatSync(fd);
      if (!opened.isFile()) return undefined;
      const content = opened.size === 0 ? Buffer.alloc(0) : fs.readFileSync(fd);
      const openedKey = statKey(opened);
      return {
        kind,
        mode: (opened.mode & 0o100) !== 0 ? '100755' : '100644',
        oid: this.#store.writeObject('blob', content),
        stat: openedKey,
        racy: isRacy(openedKey, start),
      };
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Every object id the cache names (blobs, and tree ids still current): a prune must keep them all. */
  objectIds(): Set<string> {
    const ids = new Set<string>([this.emptyBlob()]);
    const visit = (node: DirNode): void => {
      if (node.oid !== undefined) ids.add(node.oid);
      for (const child of node.children.values()) {
        if (child.kind === 'dir') visit(child);
        else ids.add(child.oid);
      }
    };
    if (this.tree !== undefined) visit(this.tree);
    return ids;
  }

  /** Writes every tree whose id was cleared and returns the root tree id. */
  buildTree(): string {
    if (this.tree === undefined) this.tree = newDir();
    return this.#build(this.tree);
  }

  #build(node: DirNode): string {
    if (node.oid !== undefined) return node.oid;
    const entries: TreeEntry[] = [];
    for (const [name, child] of node.children) {
      entries.push({
        name: escapeName(name),
        mode: child.kind === 'dir' ? '40000' : child.mode,
        oid: child.kind === 'dir' ? this.#build(child) : child.oid,
      });
    }
    if (entries.length === 0) entries.push({ name: EMPTY_DIR_MARKER, mode: '100644', oid: this.emptyBlob() });
    node.oid = this.#store.writeTree(entries);
    return node.oid;
  }

  emptyBlob(): string {
    this.#emptyBlob ??= this.#store.writeObject('blob', new Uint8Array(0));
    return this.#emptyBlob;
  }
}

function tryPinChild(parent: PinnedDir, name: string): PinnedDir | undefined {
  try {
    return pinChild(parent, name, name);
  } catch {
    return undefined;
  }
}
