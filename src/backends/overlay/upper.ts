import { PersistentMap } from '../../snapshots/persistent-map.js';

/**
 * The overlay's upper layer: what the session wrote, as a persistent tree (the memory backend's hash-trie
 * maps, so a change copies only the directories on its path and a snapshot is a reference to a root).
 * Besides files and directories it holds what a layer over a read-only directory needs: a `whiteout`
 * hides the lower entry at its path (a deletion), an `opaque` directory hides everything the lower
 * directory at its path holds (a directory that replaced something, or was created where the lower had
 * nothing), and symlinks (made by the session, or a lower link moved or copied, which keeps being a link).
 */
export interface UpperFile {
  readonly type: 'file';
  /** Never mutated and never handed out: readers get copies. */
  readonly content: Uint8Array;
  readonly executable: boolean;
  readonly createdAt: number;
  readonly modifiedAt: number;
  readonly version: number;
  readonly mimeType: string;
}

export interface UpperLink {
  readonly type: 'symlink';
  /** The link's target text, as given (or as it was in the lower directory): data, never checked. */
  readonly target: string;
  readonly createdAt: number;
}

export interface UpperDirectory {
  readonly type: 'directory';
  /** Hides the lower directory at this path and everything below it. */
  readonly opaque: boolean;
  readonly children: PersistentMap<UpperNode>;
  readonly createdAt: number;
  readonly modifiedAt: number;
}

export interface Whiteout {
  readonly type: 'whiteout';
}

export type UpperNode = UpperFile | UpperLink | UpperDirectory | Whiteout;

export const WHITEOUT: Whiteout = Object.freeze({ type: 'whiteout' });

export function upperDirectory(opaque: boolean, now: number, children: PersistentMap<UpperNode> = PersistentMap.empty()): UpperDirectory {
  return { type: 'directory', opaque, children, createdAt: now, modifiedAt: now };
}

/** Where a path stands in the upper layer: its node (if any) and whether the lower layer still shows through there. */
export interface UpperPlace {
  /** The upper node at the path; `undefined` when the upper layer says nothing about it. */
  node: UpperNode | undefined;
  /** Whether the lower directory's entry at this path can show (no opaque directory or whiteout above it). */
  lowerVisible: boolean;
  /** Depth of the deepest upper directory on the way (0: only the root). */
  upperDepth: number;
}

/**
 * The upper layer's say about `segments`. An ancestor that is a whiteout, file or link hides everything
 * below (the caller resolved ancestors as directories, so this only happens on a race).
 */
export function placeOf(root: UpperDirectory, segments: readonly string[]): UpperPlace {
  let directory = root;
  let lowerVisible = !root.opaque;
  for (let index = 0; index < segments.length; index += 1) {
    const child = directory.children.get(segments[index] as string);
    if (child === undefined) return { node: undefined, lowerVisible, upperDepth: index };
    if (index === segments.length - 1) return { node: child, lowerVisible: lowerVisible && child.type !== 'whiteout', upperDepth: index };
    if (child.type !== 'directory') return { node: WHITEOUT, lowerVisible: false, upperDepth: index };
    lowerVisible = lowerVisible && !child.opaque;
    directory = child;
  }
  return { node: root, lowerVisible, upperDepth: 0 };
}

/**
 * Sets the node at `segments` (at least one) to what `update` returns (`undefined` removes it), copying
 * only the directories on the path. A missing ancestor is made by `makeDirectory(depth)`: the caller knows
 * whether the lower layer has a directory there (then it is transparent) or not (then it is opaque).
 */
export function setUpper(
  root: UpperDirectory,
  segments: readonly string[],
  update: (existing: UpperNode | undefined) => UpperNode | undefined,
  makeDirectory: (depth: number) => UpperDirectory,
  now: number,
): UpperDirectory {
  return setBelow(root, segments, 0, update, makeDirectory, now);
}

function setBelow(
  directory: UpperDirectory,
  segments: readonly string[],
  depth: number,
  update: (existing: UpperNode | undefined) => UpperNode | undefined,
  makeDirectory: (depth: number) => UpperDirectory,
  now: number,
): UpperDirectory {
  const name = segments[depth] as string;
  const existing = directory.children.get(name);
  if (depth === segments.length - 1) {
    const replacement = update(existing);
    if (replacement === existing) return directory;
    const children = replacement === undefined ? directory.children.delete(name) : directory.children.set(name, replacement);
    return { ...directory, children, modifiedAt: now };
  }
  const child = existing?.type === 'directory' ? existing : makeDirectory(depth + 1);
  const updated = setBelow(child, segments, depth + 1, update, makeDirectory, now);
  return updated === existing ? directory : { ...directory, children: directory.children.set(name, updated) };
}
