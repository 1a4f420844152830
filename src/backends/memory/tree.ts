import { FileNotFoundError, NotADirectoryError } from '../../workspace/errors.js';
import { displayPath, joinPath, type NormalizedPath } from '../../workspace/paths.js';
import { PersistentMap } from '../../snapshots/persistent-map.js';
import { sameBytes } from '../../workspace/bytes.js';

/**
 * The memory backend's persistent tree. Nodes are never mutated: a change returns a new root that shares
 * every untouched node with the old one, so a snapshot is just a reference to a root.
 */
export interface FileNode {
  readonly type: 'file';
  /** Never mutated and never handed out: readers get copies. */
  readonly content: Uint8Array;
  readonly createdAt: number;
  readonly modifiedAt: number;
  readonly version: number;
  readonly mimeType: string;
  /** Git's mode 100755 when set. */
  readonly executable: boolean;
}

/** A symlink: its target text is data, followed only inside the tree (see `resolveLinks`). */
export interface LinkNode {
  readonly type: 'symlink';
  readonly target: string;
  readonly createdAt: number;
  readonly modifiedAt: number;
}

export interface DirectoryNode {
  readonly type: 'directory';
  readonly children: PersistentMap<TreeNode>;
  readonly createdAt: number;
  readonly modifiedAt: number;
}

export type TreeNode = FileNode | LinkNode | DirectoryNode;

export function emptyDirectory(now: number): DirectoryNode {
  return { type: 'directory', children: PersistentMap.empty(), createdAt: now, modifiedAt: now };
}

/** The node at `segments`, or `undefined` when it (or a parent) is missing or a parent is a file. */
export function lookup(root: DirectoryNode, segments: readonly string[]): TreeNode | undefined {
  let node: TreeNode = root;
  for (const segment of segments) {
    if (node.type !== 'directory') return undefined;
    const child: TreeNode | undefined = node.children.get(segment);
    if (child === undefined) return undefined;
    node = child;
  }
  return node;
}

/**
 * What an update does to the entry at the end of a path: return the node to store there, `undefined` to
 * remove it, or the existing node unchanged. It may throw, and then nothing has changed.
 */
export type EntryUpdate = (existing: TreeNode | undefined) => TreeNode | undefined;

/**
 * Applies `update` to the entry at `segments` (at least one) and returns the new root, copying only the
 * directories on the path. Missing parents are created when `createParents`, otherwise ENOENT; a file in
 * the parent chain is ENOTDIR.
 */
export function updateEntry(
  root: DirectoryNode,
  segments: readonly string[],
  update: EntryUpdate,
  createParents: boolean,
  now: number,
): DirectoryNode {
  return updateBelow(root, '', segments, 0, update, createParents, now);
}

function updateBelow(
  directory: DirectoryNode,
  directoryPath: NormalizedPath,
  segments: readonly string[],
  depth: number,
  update: EntryUpdate,
  createParents: boolean,
  now: number,
): DirectoryNode {
  const name = segments[depth] as string;
  const existing = directory.children.get(name);
  if (depth === segments.length - 1) {
    const replacement = update(existing);
    if (replacement === existing) return directory;
    const children = replacement === undefined ? directory.children.delete(name) : directory.children.set(name, replacement);
    // A directory's modification time changes when an entry is added or removed, as on a POSIX disk.
    const membershipChanged = existing === undefined || replacement === undefined;
    return { ...directory, children, modifiedAt: membershipChanged ? now : directory.modifiedAt };
  }
  const childPath = joinPath(directoryPath, name);
  let child: TreeNode;
  if (existing === undefined) {
    if (!createParents) {
      const target = segments.join('/');
      throw new FileNotFoundError(displayPath(target), `parent directory does not exist: ${childPath} (for ${target})`);
    }
    child = emptyDirectory(now);
  } else if (existing.type !== 'directory') {
    throw new NotADirectoryError(childPath, `not a directory: ${childPath} is a ${existing.type === 'file' ? 'file' : 'symlink'}`);
  } else {
    child = existing;
  }
  const updated = updateBelow(child, childPath, segments, depth + 1, update, createParents, now);
  if (updated === existing) return directory;
  return {
    ...directory,
    children: directory.children.set(name, updated),
    modifiedAt: existing === undefined ? now : directory.modifiedAt,
  };
}

/** One of several updates applied together by {@link updateEntries}. */
export interface EntryChange {
  /** Not the root. */
  path: NormalizedPath;
  update: EntryUpdate;
}

/**
 * The root after applying `changes` in order, missing parents created, as many `updateEntry` calls would:
 * the same tree, the same times. Each directory on the way is copied once for the whole batch rather than
 * once per change, so a batch of files costs about what its entries do, not its entries times the depth;
 * the changes below one directory are a range of one array (no path split, no array per level) while they
 * come grouped, as a batch in path order does. A failing change throws; which one, when several would fail,
 * is not said.
 */
export function updateEntries(root: DirectoryNode, changes: readonly EntryChange[], now: number): DirectoryNode {
  return applyBelow(root, '', changes, 0, changes.length, now);
}

/** Whether the segment of `path` starting at `from` is `name`. */
function segmentIs(path: string, from: number, name: string): boolean {
  const end = from + name.length;
  return path.startsWith(name, from) && (path.length === end || path.charCodeAt(end) === SLASH);
}

function segmentAt(path: string, from: number): string {
  const slash = path.indexOf('/', from);
  return slash === -1 ? path.slice(from) : path.slice(from, slash);
}

const SLASH = 0x2f;

/**
 * `changes[start, end)`, all below `directory` (which sits at `directoryPath`), applied: the changes of each
 * child, in their order, one after another, a run of them deeper down in one descent.
 */
function applyBelow(
  directory: DirectoryNode,
  directoryPath: NormalizedPath,
  given: readonly EntryChange[],
  givenStart: number,
  givenEnd: number,
  now: number,
): DirectoryNode {
  const from = directoryPath === '' ? 0 : directoryPath.length + 1;
  const changes = groupedByName(given, givenStart, givenEnd, from);
  const start = changes === given ? givenStart : 0;
  const end = changes === given ? givenEnd : changes.length;
  let children = directory.children;
  // Set together at the end: the directory's trie nodes copied once for the batch, not once per name.
  const replaced: [string, TreeNode][] = [];
  let membershipChanged = false;
  for (let group = start; group < end;) {
    const name = segmentAt((changes[group] as EntryChange).path, from);
    let groupEnd = group + 1;
    while (groupEnd < end && segmentIs((changes[groupEnd] as EntryChange).path, from, name)) groupEnd += 1;
    const leafLength = from + name.length;
    const existing = children.get(name);
    let child = existing;
    for (let at = group; at < groupEnd;) {
      const change = changes[at] as EntryChange;
      if (change.path.length === leafLength) {
        const replacement = change.update(child);
        if ((child === undefined) !== (replacement === undefined)) membershipChanged = true;
        child = replacement;
        at += 1;
        continue;
      }
      // A run of changes deeper down: one descent for all of them.
      let runEnd = at + 1;
      while (runEnd < groupEnd && (changes[runEnd] as EntryChange).path.length > leafLength) runEnd += 1;
      const childPath = joinPath(directoryPath, name);
      if (child !== undefined && child.type !== 'directory')
        throw new NotADirectoryError(childPath, `not a directory: ${childPath} is a ${child.type === 'file' ? 'file' : 'symlink'}`);
      if (child === undefined) membershipChanged = true;
      child = applyBelow(child ?? emptyDirectory(now), childPath, changes, at, runEnd, now);
      at = runEnd;
    }
    group = groupEnd;
    if (child === existing) continue;
    if (child === undefined) children = children.delete(name);
    else replaced.push([name, child]);
  }
  if (replaced.length > 0) children = children.setAll(replaced);
  if (children === directory.children && !membershipChanged) return directory;
  return { ...directory, children, modifiedAt: membershipChanged ? now : directory.modifiedAt };
}

/**
 * `changes[start, end)` with the changes of each name (the segment at `from`) next to each other, each
 * name's in their order: the same array when they already are (names in increasing order, as a batch in
 * path order comes, or each name in one run), else a regrouped copy.
 */
function groupedByName(changes: readonly EntryChange[], start: number, end: number, from: number): readonly EntryChange[] {
  let previous: string | undefined;
  let seen: Set<string> | undefined;
  for (let at = start; at < end; at += 1) {
    const path = (changes[at] as EntryChange).path;
    if (previous !== undefined && segmentIs(path, from, previous)) continue;
    const name = segmentAt(path, from);
    if (seen === undefined && (previous === undefined || previous < name)) {
      previous = name;
      continue;
    }
    // Out of order: a name seen before breaks the grouping.
    seen ??= namesOf(changes, start, at, from);
    if (seen.has(name)) return regrouped(changes, start, end, from);
    seen.add(name);
    previous = name;
  }
  return changes;
}

function namesOf(changes: readonly EntryChange[], start: number, end: number, from: number): Set<string> {
  const names = new Set<string>();
  for (let at = start; at < end; at += 1) names.add(segmentAt((changes[at] as EntryChange).path, from));
  return names;
}

function regrouped(changes: readonly EntryChange[], start: number, end: number, from: number): EntryChange[] {
  const byName = new Map<string, EntryChange[]>();
  for (let at = start; at < end; at += 1) {
    const change = changes[at] as EntryChange;
    const name = segmentAt(change.path, from);
    const group = byName.get(name);
    if (group === undefined) byName.set(name, [change]);
    else group.push(change);
  }
  return [...byName.values()].flat();
}

/** Every file and link at or below `node` (which sits at `path`), for diffs of added or deleted subtrees. */
export function* filesBelow(node: TreeNode, path: NormalizedPath): Generator<NormalizedPath> {
  if (node.type !== 'directory') {
    yield path;
    return;
  }
  for (const [name, child] of node.children.entries()) yield* filesBelow(child, joinPath(path, name));
}

/** Whether two files or links hold what git records the same: kind, bytes or target, and the executable bit. */
function sameLeaf(a: FileNode | LinkNode, b: FileNode | LinkNode): boolean {
  if (a === b) return true;
  if (a.type === 'symlink' || b.type === 'symlink') return a.type === 'symlink' && b.type === 'symlink' && a.target === b.target;
  return a.executable === b.executable && sameBytes(a.content, b.content);
}

export type DiffCallback = (path: NormalizedPath, status: 'added' | 'modified' | 'deleted') => void;

/**
 * Files that differ between two trees. Shared nodes are skipped at every level (directories and the
 * hash-trie nodes inside them), so the cost follows the changes, not the size of the tree.
 */
export function diffTrees(before: DirectoryNode, after: DirectoryNode, onChange: DiffCallback, path: NormalizedPath = ''): void {
  if (before === after) return;
  PersistentMap.diff(before.children, after.children, (name, a, b) => {
    const childPath = joinPath(path, name);
    if (a === undefined) {
      for (const file of filesBelow(b as TreeNode, childPath)) onChange(file, 'added');
    } else if (b === undefined) {
      for (const file of filesBelow(a, childPath)) onChange(file, 'deleted');
    } else if (a.type !== 'directory' && b.type !== 'directory') {
      if (!sameLeaf(a, b)) onChange(childPath, 'modified');
    } else if (a.type === 'directory' && b.type === 'directory') {
      diffTrees(a, b, onChange, childPath);
    } else {
      for (const file of filesBelow(a, childPath)) onChange(file, 'deleted');
      for (const file of filesBelow(b, childPath)) onChange(file, 'added');
    }
  });
}
