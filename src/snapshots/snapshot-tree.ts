import type { SnapshotEntry, SnapshotTree } from '../workspace/driver.js';
import type { DiffEntry } from '../workspace/types.js';
import { compareStrings } from '../workspace/paths.js';
import { joinPath, splitPath } from '../workspace/paths.js';

/**
 * What a stored tree says about one name in a directory `D`. `identity` is equal (`===`) for two leaves
 * when their kind, bytes and mode are certainly the same (a node, an oid), so comparing two trees of one
 * store skips what did not change; a directory's identity is the directory `D` itself.
 */
export type TreeChild<D> =
  | { kind: 'directory'; directory: D }
  | { kind: 'file'; executable: boolean; identity: unknown; bytes(): Promise<Uint8Array> }
  | { kind: 'symlink'; identity: unknown; bytes(): Promise<Uint8Array> };

/** How a backend's stored directories are read: one child by name, and all of them. */
export interface TreeReader<D> {
  child(directory: D, name: string): Promise<TreeChild<D> | undefined>;
  children(directory: D): Promise<Iterable<[string, TreeChild<D>]>>;
  /**
   * Optional: the names whose child may differ between two directories (each with its child on both sides),
   * found without listing the rest, as a persistent map's diff does. Without it both are listed whole.
   */
  changedChildren?(a: D, b: D): Iterable<[string, TreeChild<D> | undefined, TreeChild<D> | undefined]>;
  /**
   * Optional: readers with the same `identityScope` give equal identities (and equal directories) only to
   * equal contents, across stores (git object ids are: two host workspaces' stores), so two of their trees
   * are compared by identity too, each read through its own reader.
   */
  readonly identityScope?: string;
}

/**
 * A {@link SnapshotTree} over any stored tree, so that memory trees, git trees and blob manifests share one
 * lookup and one ordered walk.
 */
export function snapshotTree<D>(root: D, reader: TreeReader<D>): SnapshotTree {
  const tree: StoredTree<D> = {
    [STORED]: { root, reader },
    async entry(path) {
      let node: TreeChild<D> = { kind: 'directory', directory: root };
      for (const name of splitPath(path)) {
        if (node.kind !== 'directory') return undefined;
        const next: TreeChild<D> | undefined = await reader.child(node.directory, name);
        if (next === undefined) return undefined;
        node = next;
      }
      return toEntry(path, node);
    },
    async *entries() {
      const pending: [string, D][] = [['', root]];
      while (pending.length > 0) {
        const [base, directory] = pending.pop() as [string, D];
        const children = [...(await reader.children(directory))].sort((a, b) => compareStrings(a[0], b[0]));
        const below: [string, D][] = [];
        for (const [name, child] of children) {
          const path = joinPath(base, name);
          yield toEntry(path, child);
          if (child.kind === 'directory') below.push([path, child.directory]);
        }
        // Depth first in name order: the stack takes the last-pushed first.
        for (let index = below.length - 1; index >= 0; index -= 1) pending.push(below[index] as [string, D]);
      }
    },
  };
  return tree;
}

const STORED = Symbol('stored tree');

/**
 * How a tree made of other trees (a composition's) shows its parts, so that comparing two trees of one
 * layout compares part with part (each at its own cost) instead of walking both whole.
 */
export const TREE_PARTS = Symbol('tree parts');

export interface TreeParts {
  /** Two trees whose `layout` is the same object have parts that correspond by key. */
  readonly layout: unknown;
  /** Each part's tree, and where one of its paths shows in the whole (`undefined`: it does not show). */
  readonly parts: ReadonlyMap<string, { tree: SnapshotTree; outer(path: string): string | undefined }>;
}

const EMPTY_TREE: SnapshotTree = {
  entry: async (path) => (path === '' ? { path, kind: 'directory' } : undefined),
  entries: async function* () {},
};

async function changedParts(from: TreeParts, to: TreeParts, options: { directories?: boolean }): Promise<TreeChange[]> {
  const out: TreeChange[] = [];
  for (const key of new Set([...from.parts.keys(), ...to.parts.keys()])) {
    const [before, after] = [from.parts.get(key), to.parts.get(key)];
    const part = (after ?? before) as { outer(path: string): string | undefined };
    for (const change of await changedPaths(before?.tree ?? EMPTY_TREE, after?.tree ?? EMPTY_TREE, options)) {
      const path = part.outer(change.path);
      if (path !== undefined) out.push({ ...change, path });
    }
  }
  return out.sort((a, b) => compareStrings(a.path, b.path));
}
type StoredTree<D> = SnapshotTree & { [STORED]: { root: D; reader: TreeReader<D> } };

/** The stored root and reader behind a tree `snapshotTree` made (undefined for any other tree), for walks that memoise by identity. */
export function storedTree(tree: SnapshotTree): { root: unknown; reader: TreeReader<unknown> } | undefined {
  return (tree as Partial<StoredTree<unknown>>)[STORED];
}

/**
 * Files and symlinks that may differ between two trees, sorted by path, as `diff` reports them: a file
 * replaced by a directory is the file deleted and the directory's files added; directories themselves are
 * never reported. Two trees of one store skip every subtree and leaf whose identity is unchanged, so the
 * cost follows what changed; others are compared whole. A reported path may hold equal bytes on both sides
 * (a rewrite with the same content): the caller compares bytes where that matters.
 */
export async function changedPaths(from: SnapshotTree, to: SnapshotTree, options: { directories?: boolean } = {}): Promise<TreeChange[]> {
  const [leftParts, rightParts] = [(from as { [TREE_PARTS]?: TreeParts })[TREE_PARTS], (to as { [TREE_PARTS]?: TreeParts })[TREE_PARTS]];
  if (leftParts !== undefined && rightParts !== undefined && leftParts.layout === rightParts.layout)
    return changedParts(leftParts, rightParts, options);
  const out: TreeChange[] = [];
  const directories = options.directories === true;
  const left = (from as Partial<StoredTree<unknown>>)[STORED];
  const right = (to as Partial<StoredTree<unknown>>)[STORED];
  if (left !== undefined && right !== undefined && comparable(left.reader, right.reader)) {
    await compare([left.reader, right.reader], '', left.root, right.root, directories, out);
  } else {
    const before = new Map<string, SnapshotEntry>();
    for await (const entry of from.entries()) before.set(entry.path, entry);
    for await (const entry of to.entries()) {
      const old = before.get(entry.path);
      before.delete(entry.path);
      const wasDirectory = old?.kind === 'directory';
      if (entry.kind === 'directory') {
        if (old !== undefined && !wasDirectory) out.push({ path: entry.path, status: 'deleted' });
        if (directories && !wasDirectory) out.push({ path: entry.path, status: 'added', directory: true });
      } else if (old === undefined) out.push({ path: entry.path, status: 'added' });
      else {
        if (wasDirectory && directories) out.push({ path: entry.path, status: 'deleted', directory: true });
        out.push({ path: entry.path, status: wasDirectory ? 'added' : 'modified' });
      }
    }
    for (const [path, entry] of before) {
      if (entry.kind !== 'directory') out.push({ path, status: 'deleted' });
      else if (directories) out.push({ path, status: 'deleted', directory: true });
    }
  }
  return out.sort((a, b) => compareStrings(a.path, b.path));
}

/** A changed path; with `directories`, directories added or removed as such are reported too, marked. */
export type TreeChange = DiffEntry & { directory?: true };

function comparable(a: TreeReader<unknown>, b: TreeReader<unknown>): boolean {
  return a === b || (a.identityScope !== undefined && a.identityScope === b.identityScope);
}

async function compare<D>(
  readers: [TreeReader<D>, TreeReader<D>],
  base: string,
  a: D | undefined,
  b: D | undefined,
  directories: boolean,
  out: TreeChange[],
): Promise<void> {
  if (a === b) return;
  for (const [name, x, y] of await childPairs(readers, a, b)) {
    const path = joinPath(base, name);
    const xDir = x?.kind === 'directory' ? x.directory : undefined;
    const yDir = y?.kind === 'directory' ? y.directory : undefined;
    if (directories && (xDir === undefined) !== (yDir === undefined))
      out.push({ path, status: xDir === undefined ? 'added' : 'deleted', directory: true });
    if (xDir !== undefined || yDir !== undefined) await compare(readers, path, xDir, yDir, directories, out);
    const xLeaf = x !== undefined && x.kind !== 'directory' ? x : undefined;
    const yLeaf = y !== undefined && y.kind !== 'directory' ? y : undefined;
    if (xLeaf !== undefined && yLeaf !== undefined) {
      if (xLeaf.identity !== yLeaf.identity) out.push({ path, status: 'modified' });
    } else if (xLeaf !== undefined) out.push({ path, status: 'deleted' });
    else if (yLeaf !== undefined) out.push({ path, status: 'added' });
  }
}

/** Each name of either directory with its child on both sides (only those that may differ, when the reader can tell). */
async function childPairs<D>(
  [leftReader, rightReader]: [TreeReader<D>, TreeReader<D>],
  a: D | undefined,
  b: D | undefined,
): Promise<Iterable<[string, TreeChild<D> | undefined, TreeChild<D> | undefined]>> {
  if (a !== undefined && b !== undefined && leftReader === rightReader && leftReader.changedChildren !== undefined)
    return leftReader.changedChildren(a, b);
  const left = new Map(a === undefined ? [] : await leftReader.children(a));
  const right = new Map(b === undefined ? [] : await rightReader.children(b));
  return [...new Set([...left.keys(), ...right.keys()])].map((name) => [name, left.get(name), right.get(name)]);
}

function toEntry<D>(path: string, node: TreeChild<D>): SnapshotEntry {
  if (node.kind === 'directory') return { path, kind: 'directory' };
  if (node.kind === 'symlink') return { path, kind: 'symlink', bytes: node.bytes };
  return { path, kind: 'file', executable: node.executable, bytes: node.bytes };
}
