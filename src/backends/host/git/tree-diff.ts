import type { DiffEntry } from '../../../workspace/types.js';
import { EMPTY_DIR_MARKER, unescapeName } from './names.js';
import type { GitStore, TreeEntry } from './store.js';
import { sortDiff } from '../../../snapshots/record.js';

/**
 * Files and links that differ between two snapshot trees. Subtrees with equal ids are skipped without being
 * read, so the cost follows what changed. A file replaced by a directory reports the file deleted and the
 * directory's files added; directories themselves are never reported.
 */
export async function diffTrees(store: GitStore, from: string, to: string): Promise<DiffEntry[]> {
  const out: DiffEntry[] = [];
  await walk(store, from, to, '', out);
  return sortDiff(out);
}

async function entriesOf(store: GitStore, oid: string | undefined): Promise<Map<string, TreeEntry>> {
  const map = new Map<string, TreeEntry>();
  if (oid === undefined) return map;
  for (const entry of await store.readTree(oid)) {
    if (entry.name === EMPTY_DIR_MARKER) continue;
    map.set(unescapeName(entry.name), entry);
  }
  return map;
}

async function walk(store: GitStore, a: string | undefined, b: string | undefined, prefix: string, out: DiffEntry[]): Promise<void> {
  if (a === b) return;
  const left = await entriesOf(store, a);
  const right = await entriesOf(store, b);
  const names = new Set([...left.keys(), ...right.keys()]);
  for (const name of names) {
    const x = left.get(name);
    const y = right.get(name);
    if (x !== undefined && y !== undefined && x.oid === y.oid && x.mode === y.mode) continue;
    const path = prefix === '' ? name : `${prefix}/${name}`;
    const xTree = x?.mode === '40000';
    const yTree = y?.mode === '40000';
    if (xTree || yTree) await walk(store, xTree ? x?.oid : undefined, yTree ? y?.oid : undefined, path, out);
    const xLeaf = x !== undefined && !xTree;
    const yLeaf = y !== undefined && !yTree;
    if (xLeaf && yLeaf) out.push({ path, status: 'modified' });
    else if (xLeaf) out.push({ path, status: 'deleted' });
    else if (yLeaf) out.push({ path, status: 'added' });
  }
}
