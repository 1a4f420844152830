import { copyBytes } from '../../workspace/bytes.js';
import type { SnapshotTree } from '../../workspace/driver.js';
import { PersistentMap } from '../../snapshots/persistent-map.js';
import { snapshotTree, type TreeChild, type TreeReader } from '../../snapshots/snapshot-tree.js';
import type { DirectoryNode, TreeNode } from './tree.js';

function memoryChild(node: TreeNode | undefined): TreeChild<DirectoryNode> | undefined {
  if (node === undefined) return undefined;
  if (node.type === 'directory') return { kind: 'directory', directory: node };
  if (node.type === 'symlink') return { kind: 'symlink', identity: node, bytes: async () => new TextEncoder().encode(node.target) };
  // A copy: the stored bytes are shared with every snapshot holding them.
  return { kind: 'file', executable: node.executable, identity: node, bytes: async () => copyBytes(node.content) };
}

// One reader for every memory tree: two trees with the same reader are compared by identity (see changedPaths).
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
