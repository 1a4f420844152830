import { copyBytes } from '../workspace/bytes.js';
import { PersistentMap } from '../backends/memory/persistent-map.js';
import type { DirectoryNode, TreeNode } from '../backends/memory/tree.js';
import { EMPTY_DIR_MARKER, escapeName, unescapeName } from '../backends/host/git/names.js';
import type { GitStore, TreeEntry } from '../backends/host/git/store.js';
import type { SnapshotTree } from '../workspace/driver.js';
import { snapshotTree, type TreeChild, type TreeReader } from '../snapshots/snapshot-tree.js';

// Readers are shared per store: two trees with the same reader are compared by identity (see changedPaths).

function memoryChild(node: TreeNode | undefined): TreeChild<DirectoryNode> | undefined {
  if (node === undefined) return undefined;
  if (node.type === 'directory') return { kind: 'directory', directory: node };
  // A copy: the stored bytes are shared with every snapshot holding them.
  return { kind: 'file', executable: false, identity: node, bytes: async () => copyBytes(node.content) };
}

const MEMORY_READER: TreeReader<DirectoryNode> = {
  child: async (directory, name) => memoryChild(directory.children.get(name)),
  children: async (directory) =>
    [...directory.children.entries()].map(([name, node]) => [name, memoryChild(node) as TreeChild<DirectoryNode>]),
  // The persistent maps share every unchanged subtree: their diff visits only what changed.
  changedChildren(a, b) {
    const out: [string, TreeChild<DirectoryNode> | undefined, TreeChild<DirectoryNode> | undefined][] = [];
    PersistentMap.diff(a.children, b.children, (name, x, y) => out.push([name, memoryChild(x), memoryChild(y)]));
    return out;
  },
};

/** A memory tree as a snapshot tree: the nodes are immutable, so this view never changes. */
export function memorySnapshotTree(root: DirectoryNode): SnapshotTree {
  return snapshotTree(root, MEMORY_READER);
}

const gitReaders = new WeakMap<GitStore, TreeReader<string>>();

/** A git tree of a host snapshot (names unescaped, empty-directory markers hidden; see backends/host/git/names.ts). */
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
