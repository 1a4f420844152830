import type { BackendDriver, DriverEntryKind } from './driver.js';
import { linkLoopError, NotADirectoryError, PathEscapeError } from './errors.js';
import { displayPath, type NormalizedPath } from './paths.js';

/** Links followed on one path before it is a loop (Linux's own limit). */
export const MAX_LINK_HOPS = 40;

/** A tree that stores links as data (memory, an overlay's upper layer, a store's blob tree), as `resolveLinks` walks it. */
export interface LinkTree<N> {
  readonly root: N;
  /** The entry `name` in directory `directory`, or undefined. */
  child(directory: N, name: string): N | undefined;
  kind(node: N): DriverEntryKind;
  /** A link's target text. */
  target(node: N): string;
}

/** Where a path leads: the real path inside the root and the node there (`undefined`: missing, the path kept as written). */
export interface ResolvedPath<N> {
  path: NormalizedPath;
  node: N | undefined;
}

/**
 * Follows the links on `path` inside a tree that stores them as data, as the kernel would inside a root it
 * cannot leave: a relative target is read from the link's directory, `..` never climbs above the root, an
 * absolute target is never followed (there is no host to resolve it against), and more than
 * `MAX_LINK_HOPS` links is a loop. The final link is followed only when `followFinal`.
 *
 * Throws `PathEscapeError` (`EACCES`) for a link leading out, the loop error (`ELOOP`), and
 * `NotADirectoryError` when a file stands where a directory is needed. A missing entry on the way ends the
 * walk: the rest is appended as written (`..` applied lexically), with `node` undefined.
 */
export function resolveLinks<N>(tree: LinkTree<N>, path: NormalizedPath, followFinal: boolean): ResolvedPath<N> {
  if (path === '') return { path, node: tree.root };
  return walkPlain(tree, path, followFinal) ?? walkFollowing(tree, path, followFinal);
}

/**
 * The usual case, a path of plain names (no empty, `.` or `..` segment) with no link to follow on it: then
 * it leads to itself, found without splitting it into arrays. Undefined when `walkFollowing` must decide.
 */
function walkPlain<N>(tree: LinkTree<N>, path: NormalizedPath, followFinal: boolean): ResolvedPath<N> | undefined {
  if (!isPlain(path)) return undefined;
  let node = tree.root;
  for (let from = 0; ;) {
    const slash = path.indexOf('/', from);
    const last = slash === -1;
    const child = tree.child(node, last ? path.slice(from) : path.slice(from, slash));
    // Missing: the rest stays as written, and it is plain.
    if (child === undefined) return { path, node: undefined };
    const kind = tree.kind(child);
    if (last) return kind === 'symlink' && followFinal ? undefined : { path, node: child };
    if (kind !== 'directory') return undefined;
    node = child;
    from = slash + 1;
  }
}

/** Whether every segment of `path` is a plain name: not empty, not `.` or `..`. */
function isPlain(path: string): boolean {
  let segmentStart = 0;
  for (let index = 0; index <= path.length; index += 1) {
    if (index < path.length && path.charCodeAt(index) !== SLASH) continue;
    const length = index - segmentStart;
    if (length === 0 || (length <= 2 && path.startsWith(length === 1 ? '.' : '..', segmentStart))) return false;
    segmentStart = index + 1;
  }
  return true;
}

const SLASH = 0x2f;

function walkFollowing<N>(tree: LinkTree<N>, path: NormalizedPath, followFinal: boolean): ResolvedPath<N> {
  const queue = path.split('/');
  const names: string[] = [];
  const nodes: N[] = [tree.root];
  let hops = 0;
  while (queue.length > 0) {
    const name = queue.shift() as string;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (names.length === 0) throw escapes(path);
      names.pop();
      nodes.pop();
      continue;
    }
    const directory = nodes[nodes.length - 1] as N;
    const node = tree.child(directory, name);
    if (node === undefined) {
      const rest = [...names, name];
      for (const later of queue) {
        if (later === '' || later === '.') continue;
        if (later !== '..') rest.push(later);
        else if (rest.pop() === undefined) throw escapes(path);
      }
      return { path: rest.join('/'), node: undefined };
    }
    const kind = tree.kind(node);
    const last = queue.every((later) => later === '' || later === '.');
    if (kind === 'symlink' && (!last || followFinal)) {
      hops += 1;
      if (hops > MAX_LINK_HOPS) throw linkLoopError(displayPath(path));
      const target = tree.target(node);
      if (target.startsWith('/') || target === '') throw escapes(path);
      queue.unshift(...target.split('/'));
      continue;
    }
    if (!last && kind !== 'directory') throw new NotADirectoryError(displayPath(path));
    names.push(name);
    nodes.push(node);
  }
  return { path: names.join('/'), node: nodes[nodes.length - 1] };
}

/**
 * Thrown by a {@link LinkTree}'s `child` or `target` for a part it has not loaded yet (a directory's
 * entries, a link's target in a blob store): {@link resolveLinksLoading} waits for `load` and walks again.
 */
export class NotLoaded {
  constructor(readonly load: Promise<unknown>) {}
}

/**
 * `resolveLinks` over a tree that loads its parts on demand: each part missing is loaded (its `NotLoaded`
 * awaited) and the walk starts over, so the rules stay those of `resolveLinks`. A walk over loaded parts
 * costs what `resolveLinks` does; each retry has loaded one more part.
 */
export async function resolveLinksLoading<N>(tree: LinkTree<N>, path: NormalizedPath, followFinal: boolean): Promise<ResolvedPath<N>> {
  for (;;) {
    try {
      return resolveLinks(tree, path, followFinal);
    } catch (error) {
      if (!(error instanceof NotLoaded)) throw error;
      await error.load;
    }
  }
}

function escapes(path: NormalizedPath): PathEscapeError {
  const shown = displayPath(path);
  return new PathEscapeError(shown, `a symlink leaves the workspace: ${shown}`);
}

/** Whether any link lies on the way to `path` or at it: a tree without links can skip `resolveLinks`. */
export function hasLinkOnPath<N>(tree: LinkTree<N>, path: NormalizedPath): boolean {
  let node: N | undefined = tree.root;
  for (const name of path === '' ? [] : path.split('/')) {
    node = tree.child(node, name);
    if (node === undefined) return false;
    if (tree.kind(node) === 'symlink') return true;
  }
  return false;
}

/**
 * A link target the protocol will store: a non-empty string without NUL, at most 4095 bytes (Linux's
 * PATH_MAX). Returned as given: nothing is normalised, as git stores it.
 */
export function checkLinkTarget(target: unknown): string | undefined {
  if (typeof target !== 'string') return 'a symlink target must be a string';
  if (target === '') return 'a symlink target must not be empty';
  if (target.includes('\0')) return 'a symlink target must not contain NUL';
  if (Buffer.byteLength(target) > 4095) return 'a symlink target is longer than 4095 bytes';
  return undefined;
}

/** Whether the driver can tell at once that no link is on `path` (it leads to itself). */
export function resolvesToItself(driver: BackendDriver, path: NormalizedPath): boolean {
  if (driver.resolveNow === undefined) return false;
  try {
    return driver.resolveNow(path) === path;
  } catch {
    return false;
  }
}
