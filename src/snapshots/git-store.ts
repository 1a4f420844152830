import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { deflateSync, inflateSync } from 'node:zlib';
import git from 'isomorphic-git';

/**
 * The git object store behind the host backend's snapshots: a bare repository kept outside the workspace
 * root. Objects are hashed with node:crypto and written as loose objects directly (zlib level 1), which
 * measured far faster than isomorphic-git's add/status path (see docs/host-backend.md); reads go to the
 * loose object first and fall back to isomorphic-git, which also reads packfiles, so a repository that a
 * user ran `git gc` on keeps working.
 *
 * Isolation: no git binary runs, so nothing here reads the user's global or system config, hooks or `GIT_*`
 * variables; the author and committer identity is fixed.
 *
 * Crash safety: every object is written to a temp file and renamed into place, and a ref moves (temp file +
 * rename) only after every object it reaches is on disk, so a process killed mid-snapshot leaves at most
 * unreferenced objects and stray temp files, never a ref to something missing or a truncated object.
 */

export type GitObjectType = 'blob' | 'tree' | 'commit';

/** Tree entry modes as git writes them. */
export type TreeMode = '100644' | '100755' | '120000' | '40000';

export interface TreeEntry {
  /** The name as stored in git (escaped; see git-names.ts). */
  name: string;
  mode: TreeMode;
  oid: string;
}

export interface CommitInfo {
  tree: string;
  message: string;
}

export const AUTHOR = 'sessionfs <sessionfs@localhost>';

/** Bytes a batch holds before it is flushed as one packfile (keeps every offset far below 2 GiB). */
const PACK_FLUSH_BYTES = 256 * 1024 * 1024;
const PACK_TYPES: Record<GitObjectType, number> = { commit: 1, tree: 2, blob: 3 };

export class GitStore {
  readonly gitDir: string;
  readonly #objects: string;
  readonly #knownDirs = new Set<string>();
  readonly #treeCache = new Map<string, TreeEntry[]>();
  /** isomorphic-git's pack cache, kept across reads so a packfile is parsed once. */
  readonly #gitCache: object = {};
  #batch: PackBatch | undefined;
  readonly #packs = new Map<string, PackIndex>();

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
      for (const pack of this.#packs.values()) {
        const object = pack.read(wanted);
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
    const packed = this.#readPacked(oid);
    if (packed !== undefined) return packed;
    // Packs written by git itself (deltas, after a `git gc`): isomorphic-git reads those.
    const result = await git.readObject({ fs, gitdir: this.gitDir, oid, format: 'content', cache: this.#gitCache });
    return { type: result.type, content: Buffer.from(result.object as Uint8Array) };
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

/** Objects waiting to be written as one version-2 packfile with its version-2 index. */
class PackBatch {
  readonly #entries: Array<{ oid: string; offset: number; crc: number }> = [];
  readonly #chunks: Buffer[] = [];
  readonly #seen = new Set<string>();
  bytes = 12;

  get count(): number {
    return this.#entries.length;
  }

  add(oid: string, type: GitObjectType, content: Uint8Array): void {
    if (this.#seen.has(oid)) return;
    this.#seen.add(oid);
    const header: number[] = [];
    let size = content.byteLength;
    let byte = (PACK_TYPES[type] << 4) | (size & 0x0f);
    size = Math.floor(size / 16);
    while (size > 0) {
      header.push(byte | 0x80);
      byte = size & 0x7f;
      size = Math.floor(size / 128);
    }
    header.push(byte);
    const record = Buffer.concat([Buffer.from(header), deflateSync(content, { level: 1 })]);
    this.#entries.push({ oid, offset: this.bytes, crc: crc32(record) });
    this.#chunks.push(record);
    this.bytes += record.length;
  }

  write(packDir: string): { packPath: string; idx: Buffer } {
    fs.mkdirSync(packDir, { recursive: true });
    const head = Buffer.alloc(12);
    head.write('PACK', 0, 'latin1');
    head.writeUInt32BE(2, 4);
    head.writeUInt32BE(this.#entries.length, 8);
    const packHash = createHash('sha1').update(head);
    for (const chunk of this.#chunks) packHash.update(chunk);
    const packSum = packHash.digest();
    const name = `pack-${packSum.toString('hex')}`;

    const sorted = [...this.#entries].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
    const fanout = Buffer.alloc(256 * 4);
    const counts = new Uint32Array(256);
    for (const entry of sorted) counts[parseInt(entry.oid.slice(0, 2), 16)]! += 1;
    let running = 0;
    for (let i = 0; i < 256; i += 1) {
      running += counts[i] as number;
      fanout.writeUInt32BE(running, i * 4);
    }
    const ids = Buffer.alloc(sorted.length * 20);
    const crcs = Buffer.alloc(sorted.length * 4);
    const offsets = Buffer.alloc(sorted.length * 4);
    sorted.forEach((entry, i) => {
      ids.write(entry.oid, i * 20, 'hex');
      crcs.writeUInt32BE(entry.crc, i * 4);
      offsets.writeUInt32BE(entry.offset, i * 4);
    });
    const idxBody = Buffer.concat([Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]), fanout, ids, crcs, offsets, packSum]);
    const idx = Buffer.concat([idxBody, createHash('sha1').update(idxBody).digest()]);

    const suffix = randomBytes(6).toString('hex');
    const packTemp = join(packDir, `tmp_pack_${suffix}`);
    fs.writeFileSync(packTemp, Buffer.concat([head, ...this.#chunks, packSum]), { mode: 0o444 });
    fs.renameSync(packTemp, join(packDir, `${name}.pack`));
    const idxTemp = join(packDir, `tmp_idx_${suffix}`);
    fs.writeFileSync(idxTemp, idx, { mode: 0o444 });
    fs.renameSync(idxTemp, join(packDir, `${name}.idx`));
    return { packPath: join(packDir, `${name}.pack`), idx };
  }
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (zlib's), from node:zlib when this Node has it. */
function crc32(data: Uint8Array): number {
  const native = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;
  if (typeof native === 'function') return native(data) >>> 0;
  if (crcTable === undefined) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n += 1) {
      let c = n;
      for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of data) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const TYPE_NAMES: Record<number, string> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

/** A version-2 pack index, parsed once; reads whole (non-delta) objects from its pack. */
class PackIndex {
  readonly #packPath: string;
  readonly #count: number;
  readonly #fanout: Uint32Array;
  readonly #ids: Buffer;
  readonly #offsets: number[];
  #sortedOffsets: number[] | undefined;
  #packEnd: number | undefined;

  constructor(packPath: string, idx: Buffer) {
    if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new Error('unsupported pack index');
    this.#packPath = packPath;
    this.#fanout = new Uint32Array(256);
    for (let i = 0; i < 256; i += 1) this.#fanout[i] = idx.readUInt32BE(8 + i * 4);
    this.#count = this.#fanout[255] as number;
    const idsStart = 8 + 1024;
    this.#ids = idx.subarray(idsStart, idsStart + this.#count * 20);
    const offsetsStart = idsStart + this.#count * 24;
    const largeStart = offsetsStart + this.#count * 4;
    this.#offsets = new Array<number>(this.#count);
    for (let i = 0; i < this.#count; i += 1) {
      const raw = idx.readUInt32BE(offsetsStart + i * 4);
      this.#offsets[i] = raw & 0x80000000 ? Number(idx.readBigUInt64BE(largeStart + (raw & 0x7fffffff) * 8)) : raw;
    }
  }

  #find(oid: Buffer): number | undefined {
    const first = oid[0] as number;
    let low = first === 0 ? 0 : (this.#fanout[first - 1] as number);
    let high = (this.#fanout[first] as number) - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const cmp = Buffer.compare(this.#ids.subarray(mid * 20, mid * 20 + 20), oid);
      if (cmp === 0) return mid;
      if (cmp < 0) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }

  /** The object, `'delta'` when it is stored as a delta (not handled here), undefined when absent. */
  read(oid: Buffer): { type: string; content: Buffer } | 'delta' | undefined {
    const index = this.#find(oid);
    if (index === undefined) return undefined;
    const offset = this.#offsets[index] as number;
    this.#sortedOffsets ??= [...this.#offsets].sort((a, b) => a - b);
    this.#packEnd ??= fs.statSync(this.#packPath).size - 20;
    const sorted = this.#sortedOffsets;
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as number) <= offset) lo = mid + 1;
      else hi = mid;
    }
    const end = (sorted[lo] as number) > offset ? (sorted[lo] as number) : this.#packEnd;
    const data = Buffer.alloc(end - offset);
    const fd = fs.openSync(this.#packPath, 'r');
    try {
      fs.readSync(fd, data, 0, data.length, offset);
    } finally {
      fs.closeSync(fd);
    }
    let byte = data[0] as number;
    const type = (byte >> 4) & 7;
    let pos = 1;
    while (byte & 0x80) byte = data[pos++] as number;
    const name = TYPE_NAMES[type];
    if (name === undefined) return 'delta';
    return { type: name, content: inflateSync(data.subarray(pos)) };
  }
}
