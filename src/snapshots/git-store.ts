import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
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

export class GitStore {
  readonly gitDir: string;
  readonly #objects: string;
  readonly #knownDirs = new Set<string>();
  readonly #treeCache = new Map<string, TreeEntry[]>();

  constructor(gitDir: string) {
    this.gitDir = gitDir;
    this.#objects = join(gitDir, 'objects');
  }

  /** Creates a bare repository layout when `gitDir` has none. Synchronous so constructors can call it. */
  static initSync(gitDir: string): void {
    fs.mkdirSync(gitDir, { recursive: true });
    if (fs.existsSync(join(gitDir, 'HEAD')) && fs.existsSync(join(gitDir, 'objects'))) return;
    for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'refs/sessionfs']) fs.mkdirSync(join(gitDir, dir), { recursive: true });
    fs.writeFileSync(join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\tlogallrefupdates = false\n');
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

  /** Hashes and stores an object; returns its id. Skips the write when the object is already loose. */
  writeObject(type: GitObjectType, content: Uint8Array): string {
    const oid = GitStore.hash(type, content);
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
      raw = inflateSync(await fs.promises.readFile(this.#objectPath(oid)));
    } catch {
      raw = undefined;
    }
    if (raw !== undefined) {
      const nul = raw.indexOf(0);
      const header = raw.subarray(0, nul).toString('latin1');
      return { type: header.slice(0, header.indexOf(' ')), content: raw.subarray(nul + 1) };
    }
    // Packed (after a `git gc`): isomorphic-git reads packfiles.
    const result = await git.readObject({ fs, gitdir: this.gitDir, oid, format: 'content' });
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
