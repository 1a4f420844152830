import type { SnapshotTree } from '../../../workspace/driver.js';
import { snapshotTree, type TreeChild, type TreeReader } from '../../../snapshots/snapshot-tree.js';
import { EMPTY_DIR_MARKER, escapeName, unescapeName } from './names.js';
import type { GitStore, TreeEntry } from './store.js';

// One reader per store; trees of any two git stores are compared by identity (see changedPaths).
const gitReaders = new WeakMap<GitStore, TreeReader<string>>();

/** A git tree of a host snapshot (names unescaped, empty-directory markers hidden; see names.ts). */
export function gitSnapshotTree(store: GitStore, tree: string): SnapshotTree {
  let reader = gitReaders.get(store);
  if (reader === undefined) {
    reader = gitReader(store);
    gitReaders.set(store, reader);
  }
  return snapshotTree(tree, reader);
}

function gitReader(store: GitStore): TreeReader<string> {
  const toChild = (entry: TreeEntry): TreeChild<string> => {
    if (entry.mode === '40000') return { kind: 'directory', directory: entry.oid };
    const bytes = async (): Promise<Uint8Array> => new Uint8Array(await store.readBlob(entry.oid));
    const identity = `${entry.mode} ${entry.oid}`;
    if (entry.mode === '120000') return { kind: 'symlink', identity, bytes };
    return { kind: 'file', executable: entry.mode === '100755', identity, bytes };
  };
  return {
    // Object ids name contents wherever they are stored: a fork's store and its parent's compare by them.
    identityScope: 'git',
    async child(directory, name) {
      const stored = escapeName(name);
      const found = (await store.readTree(directory)).find((entry) => entry.name === stored);
      return found === undefined ? undefined : toChild(found);
    },
    async children(directory) {
      const entries = await store.readTree(directory);
      return entries.filter((entry) => entry.name !== EMPTY_DIR_MARKER).map((entry) => [unescapeName(entry.name), toChild(entry)]);
    },
  };
}
