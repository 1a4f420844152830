import * as fs from 'node:fs';
import { join } from 'node:path';
import { PackIndex } from './pack.js';
import type { GitObjectType, GitStore } from './store.js';

export interface PruneResult {
  /** Loose objects removed. */
  looseRemoved: number;
  /** Packs removed (whole, or after their live objects were copied to a new pack). */
  packsRemoved: number;
  /** Set when the prune did not run: a snapshot, restore or diff was using the git dir (see GitDirGate). */
  skipped?: true;
}

const HEX40 = /^[0-9a-f]{40}$/;
/** A file in a git dir that another repository borrows objects from (a fork's alternates name it). */
const BORROWED = 'sessionfs-borrowed';

/**
 * Records that another repository borrows `gitDir`'s objects: from then on a prune there drops no object
 * (refs released still go), since the borrower's refs, which this repository cannot see, may reach any.
 */
export function markBorrowed(gitDir: string): void {
  fs.writeFileSync(join(gitDir, BORROWED), 'objects borrowed through git alternates: never prune\n');
}

/**
 * Removes from the repository every object that no ref reaches and that is not in `keep` (the objects the
 * caller's stat cache names: a next snapshot reuses them without writing them again). Native git is not
 * used (the store runs no git binary: see store.ts), so this does what `git prune` and a `git repack -d`
 * would, for the packs of our own shape and git's alike:
 *
 * - unreachable loose objects are removed;
 * - a pack none of whose objects is reachable is removed; one that is at least half dead has its live
 *   objects copied into one new pack, written before any old pack goes; a pack mostly alive is kept (so
 *   a prune costs what died, and at most half of what is stored is garbage).
 *
 * Before removing anything it rewrites the git dir's prune token, so other workspaces on this git dir
 * (which may cache ids of objects removed here) hash everything again at their next snapshot. When a
 * reachable commit or tree cannot be read, nothing is removed (a prune never makes a damaged repository
 * worse); when copying a live object fails, the packs it was to leave stay.
 */
export async function pruneUnreachable(store: GitStore, keep: Iterable<string>): Promise<PruneResult> {
  const result: PruneResult = { looseRemoved: 0, packsRemoved: 0 };
  // A fork reads this repository's objects through its alternates, reaching them from refs we cannot see.
  if (fs.existsSync(join(store.gitDir, BORROWED))) return result;
  const live = new Set<string>(keep);
  for (const oid of listRefs(store.gitDir).values()) await markCommit(store, oid, live);
  store.announcePrune();
  const objects = store.objectsDir;
  for (const dir of fs.readdirSync(objects)) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of fs.readdirSync(join(objects, dir))) {
      const oid = `${dir}${name}`;
      if (!HEX40.test(oid) || live.has(oid)) continue;
      fs.rmSync(join(objects, dir, name), { force: true });
      result.looseRemoved += 1;
    }
  }
  const packDir = join(objects, 'pack');
  const doomed: string[] = [];
  const copies: string[] = [];
  for (const name of fs.existsSync(packDir) ? fs.readdirSync(packDir) : []) {
    if (!name.endsWith('.idx')) continue;
    const base = join(packDir, name.slice(0, -4));
    if (fs.existsSync(`${base}.keep`) || !fs.existsSync(`${base}.pack`)) continue;
    let index: PackIndex;
    try {
      index = new PackIndex(`${base}.pack`, fs.readFileSync(`${base}.idx`));
    } catch {
      continue; // an index version we do not read: left alone
    }
    const ids = [...index.oids()];
    const alive = ids.filter((oid) => live.has(oid));
    if (alive.length * 2 > ids.length) continue;
    copies.push(...alive);
    doomed.push(base);
  }
  if (copies.length > 0) {
    store.beginBatch();
    try {
      for (const oid of new Set(copies)) {
        const object = await store.readObject(oid);
        store.writeObject(object.type as GitObjectType, object.content);
      }
    } finally {
      store.endBatch();
    }
  }
  for (const base of doomed) {
    // The index first: git and the store ignore a pack without one.
    for (const ext of ['.idx', '.pack', '.rev', '.bitmap', '.mtimes']) fs.rmSync(`${base}${ext}`, { force: true });
    result.packsRemoved += 1;
  }
  return result;
}

/** Adds a commit and everything its tree reaches to `live`; throws when any of it cannot be read. */
async function markCommit(store: GitStore, commit: string, live: Set<string>): Promise<void> {
  if (live.has(commit)) return;
  const info = await store.readCommit(commit);
  if (info === undefined) throw new Error(`prune: ref target ${commit} is not a readable commit`);
  live.add(commit);
  await markTree(store, info.tree, live);
}

async function markTree(store: GitStore, tree: string, live: Set<string>): Promise<void> {
  if (live.has(tree)) return;
  const entries = await store.readTree(tree);
  live.add(tree);
  for (const entry of entries) {
    if (entry.mode === '40000') await markTree(store, entry.oid, live);
    else live.add(entry.oid);
  }
}

/** Every ref of the repository with the object it names: `packed-refs`, then loose refs under `refs/`. */
function listRefs(gitDir: string): Map<string, string> {
  const refs = new Map<string, string>();
  try {
    for (const line of fs.readFileSync(join(gitDir, 'packed-refs'), 'utf8').split('\n')) {
      const match = /^([0-9a-f]{40}) (refs\/.+)$/.exec(line);
      if (match !== null) refs.set(match[2] as string, match[1] as string);
    }
  } catch {
    // no packed refs
  }
  const walk = (rel: string): void => {
    for (const dirent of fs.readdirSync(join(gitDir, rel), { withFileTypes: true })) {
      const name = `${rel}/${dirent.name}`;
      if (dirent.isDirectory()) walk(name);
      else if (dirent.isFile() && !dirent.name.endsWith('.lock')) {
        const text = fs.readFileSync(join(gitDir, name), 'utf8').trim();
        if (HEX40.test(text)) refs.set(name, text);
      }
    }
  };
  walk('refs');
  return refs;
}
