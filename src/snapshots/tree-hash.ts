import { createHash } from 'node:crypto';
import type { SnapshotTree } from '../workspace/driver.js';
import { splitPath } from '../workspace/paths.js';
import { blobOid } from './git-format.js';
import { storedTree, TREE_PARTS, type TreeChild, type TreeParts, type TreeReader } from './snapshot-tree.js';

/**
 * Git's tree id of what a snapshot tree holds (what `git write-tree` prints for the same files): regular
 * files as mode 100644 or 100755, links as 120000 with their target as the blob, directories as 40000,
 * empty ones included (a valid tree object git itself never writes: it cannot keep an empty directory).
 *
 * A tree a backend stores (`snapshotTree`) is hashed through a memo of its reader, keyed by each directory's
 * and leaf's identity, so a tree that shares most of its directories with one hashed before costs what
 * changed: the first hash of a tree reads every file once. A composed tree is hashed part by part: its id is
 * a SHA-1 over each part's tree id and where it shows, not a git tree id. Any other tree is read whole.
 */
export async function treeHash(tree: SnapshotTree): Promise<string> {
  const parts = (tree as { [TREE_PARTS]?: TreeParts })[TREE_PARTS];
  if (parts !== undefined) return partsHash(parts);
  const stored = storedTree(tree);
  if (stored !== undefined) return directoryHash(stored.reader, stored.root, memoOf(stored.reader));
  return walkedHash(tree);
}

interface Memo {
  directories: Cache;
  blobs: Cache;
}

/** Identity → id: objects weakly; strings (oids, hashes, paths of a never-written layer) in a bounded map. */
class Cache {
  readonly #objects = new WeakMap<object, string>();
  readonly #strings = new Map<string, string>();

  get(key: unknown): string | undefined {
    if (typeof key === 'object' && key !== null) return this.#objects.get(key);
    return typeof key === 'string' ? this.#strings.get(key) : undefined;
  }

  set(key: unknown, value: string): void {
    if (typeof key === 'object' && key !== null) this.#objects.set(key, value);
    else if (typeof key === 'string') {
      // A long-lived reader must not keep every id it ever saw: start over past a bound.
      if (this.#strings.size >= 250_000) this.#strings.clear();
      this.#strings.set(key, value);
    }
  }
}

const memos = new WeakMap<object, Memo>();

function memoOf(reader: object): Memo {
  let memo = memos.get(reader);
  if (memo === undefined) {
    memo = { directories: new Cache(), blobs: new Cache() };
    memos.set(reader, memo);
  }
  return memo;
}

type GitEntry = { mode: string; name: string; oid: string };

async function directoryHash(reader: TreeReader<unknown>, directory: unknown, memo: Memo): Promise<string> {
  const known = memo.directories.get(directory);
  if (known !== undefined) return known;
  const entries: GitEntry[] = [];
  for (const [name, child] of await reader.children(directory)) entries.push({ name, ...(await childId(reader, child, memo)) });
  const oid = gitTreeOid(entries);
  memo.directories.set(directory, oid);
  return oid;
}

async function childId(reader: TreeReader<unknown>, child: TreeChild<unknown>, memo: Memo): Promise<{ mode: string; oid: string }> {
  if (child.kind === 'directory') return { mode: '40000', oid: await directoryHash(reader, child.directory, memo) };
  const mode = child.kind === 'symlink' ? '120000' : child.executable ? '100755' : '100644';
  let oid = memo.blobs.get(child.identity);
  if (oid === undefined) {
    oid = blobOid(await child.bytes());
    memo.blobs.set(child.identity, oid);
  }
  return { mode, oid };
}

/** A git tree object's id: entries in git's order (a directory sorts as its name followed by `/`). */
function gitTreeOid(entries: GitEntry[]): string {
  const key = (entry: GitEntry): Buffer => Buffer.from(entry.mode === '40000' ? `${entry.name}/` : entry.name, 'utf8');
  const sorted = entries.map((entry) => ({ entry, key: key(entry) })).sort((a, b) => Buffer.compare(a.key, b.key));
  const body = Buffer.concat(
    sorted.flatMap(({ entry }) => [Buffer.from(`${entry.mode} ${entry.name}\0`, 'utf8'), Buffer.from(entry.oid, 'hex')]),
  );
  return createHash('sha1').update(`tree ${body.length}\0`).update(body).digest('hex');
}

/** A tree of no known store: every entry read, each directory hashed after what it holds. */
async function walkedHash(tree: SnapshotTree): Promise<string> {
  const directories = new Map<string, GitEntry[]>([['', []]]);
  const parentOf = (path: string): { parent: string; name: string } => {
    const segments = splitPath(path);
    return { parent: segments.slice(0, -1).join('/'), name: segments.at(-1) as string };
  };
  for await (const entry of tree.entries()) {
    if (entry.kind === 'directory') directories.set(entry.path, []);
    else {
      const { parent, name } = parentOf(entry.path);
      const mode = entry.kind === 'symlink' ? '120000' : entry.executable ? '100755' : '100644';
      directories.get(parent)?.push({ mode, name, oid: blobOid(await entry.bytes()) });
    }
  }
  // Deepest first, so each directory's id is known before its parent's.
  const paths = [...directories.keys()].sort((a, b) => splitPath(b).length - splitPath(a).length);
  let root = '';
  for (const path of paths) {
    const oid = gitTreeOid(directories.get(path) as GitEntry[]);
    if (path === '') root = oid;
    else {
      const { parent, name } = parentOf(path);
      directories.get(parent)?.push({ mode: '40000', name, oid });
    }
  }
  return root;
}

async function partsHash(parts: TreeParts): Promise<string> {
  const lines: string[] = [];
  for (const [key, part] of parts.parts) lines.push(`${key}\t${part.outer('') ?? ''}\t${await treeHash(part.tree)}`);
  return createHash('sha1').update(lines.sort().join('\n')).digest('hex');
}
