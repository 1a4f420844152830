import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { lazyRequire } from '../../../workspace/lazy-require.js';
import { PACK_FLUSH_BYTES, PackBatch, PackIndex, type GitObjectType } from './pack.js';

/** Only objects read back through git's own format (packs written elsewhere) need it. */
const git = lazyRequire<typeof import('isomorphic-git')>('isomorphic-git');

/**
 * The git object store behind the host backend's snapshots: a bare repository kept outside the workspace
 * root. Objects are hashed with node:crypto and written as loose objects directly (zlib level 1), which
 * measured far faster than isomorphic-git's add/status path (docs/backends.md, "Cost, measured"); reads go
 * to the loose object first and fall back to isomorphic-git, which also reads packfiles, so a repository that a
 * user ran `git gc` on keeps working.
 *
 * Isolation: no git binary runs, so nothing here reads the user's global or system config, hooks or `GIT_*`
 * variables; the author and committer identity is fixed.
 *
 * Crash safety: every object is written to a temp file and renamed into place, and a ref moves (temp file +
 * rename) only after every object it reaches is on disk, so a process killed mid-snapshot leaves at most
 * unreferenced objects and stray temp files, never a ref to something missing or a truncated object.
 */

export type { GitObjectType } from './pack.js';

/** Tree entry modes as git writes them. */
export type TreeMode = '100644' | '100755' | '120000' | '40000';

export interface TreeEntry {
  /** The name as stored in git (escaped; see names.ts). */
  name: string;
  mode: TreeMode;
  oid: string;
}

export interface CommitInfo {
  tree: string;
  message: string;
}

/** A file in the git dir that every prune rewrites (see `GitStore.prunedSince`). */
const PRUNE_TOKEN = 'sessionfs-pruned';

export const AUTHOR = 'sessionfs <sessionfs@localhost>';

export class GitStore {
  readonly gitDir: string;
  readonly #objects: string;
  readonly #knownDirs = new Set<string>();
  readonly #treeCache = new Map<string, TreeEntry[]>();
  /** isomorphic-git's pack cache, kept across reads so a packfile is parsed once. */
  readonly #gitCache: object = {};
  #batch: PackBatch | undefined;
  /** The prune token last seen (see `prunedSince`); undefined before the first look. */
  #pruneToken: string | undefined;
  readonly #packs = new Map<string, PackIndex>();
  #alternates: GitStore[] | undefined;

  constructor(gitDir: string) {
    this.gitDir = gitDir;
    this.#objects = join(gitDir, 'objects');
  }

  /** Creates a bare repository layout when `gitDir` has none. Synchronous so constructors can call it. */
  static initSync(gitDir: string): void {
    fs.mkdirSync(gitDir, { recursive: true });
    if (fs.existsSync(join(gitDir, 'HEAD')) && fs.existsSync(join(gitDir, 'objects'))) return;
    for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'refs/sessionfs'])
      fs.mkdirSync(join(gitDir, dir), { recursive: true });
    fs.writeFileSync(
      join(gitDir, 'config'),
      '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\tlogallrefupdates = false\n',
    );
    fs.writeFileSync(join(gitDir, 'description'), 'sessionfs snapshots\n');
    fs.writeFileSync(join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
  }

  /** Whether `gitDir` looks like a repository (or an empty directory we may initialise). */
  static isUsableDir(gitDir: string): boolean {
    try {
      const names = fs.readdirSync(gitDir);
      return names.length === 0 || (names.includes('HEAD') && names.includes('objects'));
    } catch {
      return true;
    }
  }

  // ---- hashing and writing ----------------------------------------------------------------------------

  static hash(type: GitObjectType, content: Uint8Array): string {
    return createHash('sha1').update(`${type} ${content.byteLength}\0`).update(content).digest('hex');
  }

  #objectPath(oid: string): string {
    return join(this.#objects, oid.slice(0, 2), oid.slice(2));
  }

  hasObject(oid: string): boolean {
    return fs.existsSync(this.#objectPath(oid));
  }

  /**
   * Collects every object written until `endBatch` into one packfile instead of thousands of loose files:
   * used for full hashes (a first snapshot, a fresh instance), where it measured roughly twice as fast as
   * loose objects. Objects already stored may be written again; git tolerates duplicates across packs.
   */
  beginBatch(): void {
    this.#batch ??= new PackBatch();
  }

  /** Writes the batch's pack and index (pack first: git ignores a pack without its index). */
  endBatch(): void {
    const batch = this.#batch;
    this.#batch = undefined;
    if (batch !== undefined && batch.count > 0) {
      const { packPath, idx } = batch.write(join(this.#objects, 'pack'));
      this.#packs.set(packPath, new PackIndex(packPath, idx));
    }
  }

  /** Objects of the packs this store knows (its own, and any found on disk), without deltas. */
  #readPacked(oid: string): { type: string; content: Buffer } | undefined {
    const wanted = Buffer.from(oid, 'hex');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      for (const [path, pack] of this.#packs) {
        let object: ReturnType<PackIndex['read']>;
        try {
          object = pack.read(wanted);
        } catch {
          // Removed by a prune (ours or another workspace's on this git dir): its live objects are elsewhere now.
          this.#packs.delete(path);
          continue;
        }
        if (object !== undefined) return object === 'delta' ? undefined : object;
      }
      // Not found: pick up packs written since (by git, or another workspace on this git dir), once.
      if (attempt === 0 && !this.#scanPacks()) break;
    }
    return undefined;
  }

  /** Adds packs on disk not yet known; returns whether any were added. */
  #scanPacks(): boolean {
    const dir = join(this.#objects, 'pack');
    let added = false;
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return false;
    }
    for (const name of names) {
      if (!name.endsWith('.idx')) continue;
      const packPath = join(dir, `${name.slice(0, -4)}.pack`);
      if (this.#packs.has(packPath) || !fs.existsSync(packPath)) continue;
      try {
        this.#packs.set(packPath, new PackIndex(packPath, fs.readFileSync(join(dir, name))));
        added = true;
      } catch {
        // unreadable index: leave it to isomorphic-git
      }
    }
    return added;
  }

  /** Hashes and stores an object; returns its id. Skips the write when the object is already loose. */
  writeObject(type: GitObjectType, content: Uint8Array): string {
    const oid = GitStore.hash(type, content);
    if (this.#batch !== undefined) {
      this.#batch.add(oid, type, content);
      if (this.#batch.bytes > PACK_FLUSH_BYTES) {
        this.endBatch();
        this.beginBatch();
      }
      return oid;
    }
    const path = this.#objectPath(oid);
    if (fs.existsSync(path)) return oid;
    const dir = join(this.#objects, oid.slice(0, 2));
    if (!this.#knownDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      this.#knownDirs.add(dir);
    }
    const header = Buffer.from(`${type} ${content.byteLength}\0`);
    const deflated = deflateSync(Buffer.concat([header, content]), { level: 1 });
    const temp = join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`);
    fs.writeFileSync(temp, deflated, { mode: 0o444 });
    fs.renameSync(temp, path);
    return oid;
  }

  writeTree(entries: TreeEntry[]): string {
    const sorted = [...entries].sort(compareTreeEntries);
    const parts: Buffer[] = [];
    for (const entry of sorted) {
      parts.push(Buffer.from(`${entry.mode} ${entry.name}\0`), Buffer.from(entry.oid, 'hex'));
    }
    const oid = this.writeObject('tree', Buffer.concat(parts));
    if (!this.#treeCache.has(oid)) this.#treeCache.set(oid, sorted);
    return oid;
  }

  writeCommit(tree: string, message: string, when: Date): string {
    const seconds = Math.floor(when.getTime() / 1000);
    const body = `tree ${tree}\nauthor ${AUTHOR} ${seconds} +0000\ncommitter ${AUTHOR} ${seconds} +0000\n\n${message}`;
    return this.writeObject('commit', Buffer.from(body, 'utf8'));
  }

  // ---- reading ----------------------------------------------------------------------------------------

  async readObject(oid: string): Promise<{ type: string; content: Buffer }> {
    const local = this.#readLocal(oid);
    if (local !== undefined) return local;
    // A fork's repository borrows its parent's objects (git alternates): look there before giving up.
    for (const alternate of this.#alternateStores()) {
      try {
        return await alternate.readObject(oid);
      } catch {
        // not there either
      }
    }
    // Packs written by git itself (deltas, after a `git gc`): isomorphic-git reads those.
    const result = await git().readObject({ fs, gitdir: this.gitDir, oid, format: 'content', cache: this.#gitCache });
    return { type: result.type, content: Buffer.from(result.object as Uint8Array) };
  }

  /**
   * The stores of the repositories `objects/info/alternates` names (absolute `<gitDir>/objects` lines, as a
   * fork writes them), read once: a fork is made with its alternates and they never change.
   */
  #alternateStores(): GitStore[] {
    if (this.#alternates === undefined) {
      let lines: string[] = [];
      try {
        lines = fs.readFileSync(join(this.#objects, 'info', 'alternates'), 'utf8').split('\n');
      } catch {
        // no alternates
      }
      this.#alternates = lines
        .map((line) => line.trim())
        .filter((line) => line.startsWith('/') && basename(line) === 'objects')
        .map((line) => new GitStore(dirname(line)));
    }
    return this.#alternates;
  }

  /** An object stored loose or in a pack of this repository itself (not its alternates, not git's delta packs). */
  #readLocal(oid: string): { type: string; content: Buffer } | undefined {
    let raw: Buffer | undefined;
    try {
      // Synchronous: a loose object is one small read, cheaper than a thread-pool round trip.
      raw = inflateSync(fs.readFileSync(this.#objectPath(oid)));
    } catch {
      raw = undefined;
    }
    if (raw !== undefined) {
      const nul = raw.indexOf(0);
      const header = raw.subarray(0, nul).toString('latin1');
      return { type: header.slice(0, header.indexOf(' ')), content: raw.subarray(nul + 1) };
    }
    return this.#readPacked(oid);
  }

  async readBlob(oid: string): Promise<Buffer> {
    const object = await this.readObject(oid);
    if (object.type !== 'blob') throw new Error(`object ${oid} is a ${object.type}, not a blob`);
    return object.content;
  }

  async readTree(oid: string): Promise<TreeEntry[]> {
    const cached = this.#treeCache.get(oid);
    if (cached !== undefined) return cached;
    const object = await this.readObject(oid);
    if (object.type !== 'tree') throw new Error(`object ${oid} is a ${object.type}, not a tree`);
    const entries = parseTree(object.content);
    if (this.#treeCache.size > 20_000) this.#treeCache.clear();
    this.#treeCache.set(oid, entries);
    return entries;
  }

  async readCommit(oid: string): Promise<CommitInfo | undefined> {
    let object: { type: string; content: Buffer };
    try {
      object = await this.readObject(oid);
    } catch {
      return undefined;
    }
    if (object.type !== 'commit') return undefined;
    const text = object.content.toString('utf8');
    const split = text.indexOf('\n\n');
    const headers = split === -1 ? text : text.slice(0, split);
    const tree = /^tree ([0-9a-f]{40})$/m.exec(headers)?.[1];
    if (tree === undefined) return undefined;
    return { tree, message: split === -1 ? '' : text.slice(split + 2) };
  }

  // ---- refs -------------------------------------------------------------------------------------------

  /** Points `ref` at `oid` (temp file + rename: a crash leaves the old value or the new one). */
  writeRef(ref: string, oid: string): void {
    const path = join(this.gitDir, ...ref.split('/'));
    fs.mkdirSync(join(path, '..'), { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.lock`;
    fs.writeFileSync(temp, `${oid}\n`);
    fs.renameSync(temp, path);
  }

  /** Removes `ref` (its loose file, and its line in `packed-refs` when a `git gc` packed it). */
  deleteRef(ref: string): void {
    fs.rmSync(join(this.gitDir, ...ref.split('/')), { force: true });
    const packedPath = join(this.gitDir, 'packed-refs');
    let packed: string;
    try {
      packed = fs.readFileSync(packedPath, 'utf8');
    } catch {
      return;
    }
    const lines = packed.split('\n');
    const kept = lines.filter((line) => !line.endsWith(` ${ref}`));
    if (kept.length === lines.length) return;
    const temp = `${packedPath}.${randomBytes(6).toString('hex')}.lock`;
    fs.writeFileSync(temp, kept.join('\n'));
    fs.renameSync(temp, packedPath);
  }

  /**
   * Whether a prune ran on this git dir (here or in another workspace or process) since this store last
   * looked: the objects a stat cache names may then be gone, and the cache must hash everything again.
   */
  prunedSince(): boolean {
    let token = '';
    try {
      token = fs.readFileSync(join(this.gitDir, PRUNE_TOKEN), 'utf8');
    } catch {
      // never pruned
    }
    const changed = this.#pruneToken !== undefined && token !== this.#pruneToken;
    this.#pruneToken = token;
    return changed;
  }

  /** Records that a prune is about to run (before anything is removed), and that this store knows of it. */
  announcePrune(): void {
    const token = randomBytes(8).toString('hex');
    const temp = join(this.gitDir, `${PRUNE_TOKEN}.${token}.lock`);
    fs.writeFileSync(temp, token);
    fs.renameSync(temp, join(this.gitDir, PRUNE_TOKEN));
    this.#pruneToken = token;
  }

  /** The repository's `objects` directory (for the prune). */
  get objectsDir(): string {
    return this.#objects;
  }

  /** The object a ref points to, from its loose file or `packed-refs`; `undefined` when it does not exist. */
  async resolveRef(ref: string): Promise<string | undefined> {
    try {
      const text = (await fs.promises.readFile(join(this.gitDir, ...ref.split('/')), 'utf8')).trim();
      if (/^[0-9a-f]{40}$/.test(text)) return text;
      return undefined;
    } catch {
      // fall through to packed-refs
    }
    try {
      const packed = await fs.promises.readFile(join(this.gitDir, 'packed-refs'), 'utf8');
      for (const line of packed.split('\n')) {
        const match = /^([0-9a-f]{40}) (.+)$/.exec(line);
        if (match !== null && match[2] === ref) return match[1];
      }
    } catch {
      // no packed refs
    }
    return undefined;
  }
}

/** Git's tree order: byte order of names, a directory comparing as if its name ended in `/`. */
export function compareTreeEntries(a: TreeEntry, b: TreeEntry): number {
  const left = Buffer.from(a.mode === '40000' ? `${a.name}/` : a.name);
  const right = Buffer.from(b.mode === '40000' ? `${b.name}/` : b.name);
  return Buffer.compare(left, right);
}

export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let index = 0;
  while (index < content.length) {
    const space = content.indexOf(0x20, index);
    const nul = content.indexOf(0, space);
    const mode = content.subarray(index, space).toString('latin1');
    const name = content.subarray(space + 1, nul).toString('utf8');
    const oid = content.subarray(nul + 1, nul + 21).toString('hex');
    entries.push({ name, mode: (mode === '040000' ? '40000' : mode) as TreeMode, oid });
    index = nul + 21;
  }
  return entries;
}
