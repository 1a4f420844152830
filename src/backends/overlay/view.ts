import type * as fs from 'node:fs';
import type { DriverEntryKind, DriverWalkEntry } from '../../workspace/driver.js';
import { displayPath, joinPath, parentPath, splitPath, type NormalizedPath } from '../../workspace/paths.js';
import type { LinkStat, Resolved } from '../../host-files/sandbox.js';
import { PathEscapeError } from '../../workspace/errors.js';
import type { LowerLayer } from './lower.js';
import { placeOf, type UpperDirectory, type UpperFile, type UpperLink, type UpperNode } from './upper.js';

/** One entry of the merged tree, links not followed: from the upper layer (`upper`) or the lower one. */
export class MergedEntry implements LinkStat {
  constructor(
    readonly kind: DriverEntryKind,
    /** The upper node holding this entry; `undefined` when the entry is the lower directory's. */
    readonly upper: UpperFile | UpperLink | UpperDirectory | undefined,
    /** A directory: whether the lower directory at this path shows through it. */
    readonly through: boolean,
    /** The lower entry's lstat, when it was looked up by path (a listing does not stat). */
    readonly lowerStat?: fs.Stats,
  ) {}

  isSymbolicLink(): boolean {
    return this.kind === 'symlink';
  }

  isDirectory(): boolean {
    return this.kind === 'directory';
  }
}

function upperEntry(node: Exclude<UpperNode, { type: 'whiteout' }>, lowerVisible: boolean): MergedEntry {
  return node.type === 'directory'
    ? new MergedEntry('directory', node, lowerVisible && !node.opaque)
    : new MergedEntry(node.type, node, false);
}

const ABSENT = Object.assign(new Error('absent'), { code: 'ENOENT' });

/**
 * The overlay's merged tree for one upper root (the live one, or a snapshot's): the upper layer wins, a
 * whiteout or an opaque directory hides the lower entries beneath, and everything else is the lower
 * directory's. Paths resolve with the host sandbox's own resolver, run over this merged tree: links are
 * followed inside the root only, and a target leaving the lower root is a `PathEscapeError`.
 */
export class OverlayView {
  constructor(
    readonly lower: LowerLayer,
    readonly root: UpperDirectory,
  ) {}

  /** The entry at a path whose ancestors are directories of the merged tree, links not followed. */
  entry(rel: NormalizedPath): MergedEntry | undefined {
    if (rel === '') return new MergedEntry('directory', this.root, !this.root.opaque);
    const place = placeOf(this.root, splitPath(rel));
    const node = place.node;
    if (node !== undefined) return node.type === 'whiteout' ? undefined : upperEntry(node, place.lowerVisible);
    if (!place.lowerVisible) return undefined;
    const found = this.lower.entry(rel, place.upperDepth);
    return found === undefined ? undefined : new MergedEntry(found.kind, undefined, found.kind === 'directory', found.stat);
  }

  /** Whether the lower layer has a visible entry at `rel` that the upper layer would have to hide (a whiteout). */
  lowerHas(rel: NormalizedPath): boolean {
    const parent = this.entry(parentPath(rel));
    return parent?.kind === 'directory' && parent.through && this.lower.entry(rel, splitPath(rel).length - 1) !== undefined;
  }

  /**
   * Resolves a path through the merged tree: see `Sandbox.resolveWith`. A lower link keeps the host's rules
   * (an absolute target inside the lower root is followed); a link of the upper layer is the session's data,
   * so its absolute target is never resolved against the host: it leaves the workspace.
   */
  resolve(rel: NormalizedPath, followFinal: boolean): Resolved<MergedEntry> {
    const sandbox = this.lower.sandbox;
    const relOf = (abs: string): NormalizedPath => {
      const inside = sandbox.relativeOf(abs);
      if (inside === undefined) throw ABSENT;
      return inside;
    };
    return sandbox.resolveWith(rel, followFinal, {
      lstat: (abs) => {
        const found = this.entry(relOf(abs));
        if (found === undefined) throw ABSENT;
        return found;
      },
      readlink: (abs) => this.#followed(relOf(abs)),
    });
  }

  /** The target a resolution follows from the link at `rel`. */
  #followed(rel: NormalizedPath): string {
    const found = this.entry(rel);
    if (found?.upper?.type === 'symlink' && found.upper.target.startsWith('/')) {
      const shown = displayPath(rel);
      throw new PathEscapeError(shown, `a symlink leaves the workspace: ${shown}`);
    }
    return this.readlink(rel);
  }

  /** A link's target text. */
  readlink(rel: NormalizedPath): string {
    const found = this.entry(rel);
    if (found?.upper?.type === 'symlink') return found.upper.target;
    if (found === undefined || found.kind !== 'symlink') throw Object.assign(new Error('not a link'), { code: 'EINVAL' });
    return this.lower.readlink(rel);
  }

  /** Children of the merged directory `rel` (a real path) whose entry is `directory`. */
  children(rel: NormalizedPath, directory: MergedEntry): Promise<[string, MergedEntry][]> {
    return mergedChildren(this.lower, rel, directory);
  }

  /**
   * Every entry below the real directory `rel`, spelled under `logical`, never through a link. A directory
   * the upper layer holds nothing of is walked straight on the disk (the host backend's walk).
   */
  async *walk(rel: NormalizedPath, logical: NormalizedPath, directory: MergedEntry): AsyncGenerator<DriverWalkEntry> {
    if (directory.upper === undefined) {
      for await (const entry of this.lower.walk(rel))
        yield { path: rel === '' ? joinPath(logical, entry.path) : logical + entry.path.slice(rel.length), kind: entry.kind };
      return;
    }
    for (const [name, child] of await this.children(rel, directory)) {
      yield { path: joinPath(logical, name), kind: child.kind };
      if (child.kind === 'directory') yield* this.walk(joinPath(rel, name), joinPath(logical, name), child);
    }
  }
}

/** Children of the merged directory `rel` (a real path) whose entry is `directory`: the upper ones, then the lower ones showing through. */
export async function mergedChildren(lower: LowerLayer, rel: NormalizedPath, directory: MergedEntry): Promise<[string, MergedEntry][]> {
  const out: [string, MergedEntry][] = [];
  const upper = directory.upper?.type === 'directory' ? directory.upper : undefined;
  if (upper !== undefined) {
    for (const [name, node] of upper.children.entries())
      if (node.type !== 'whiteout') out.push([name, upperEntry(node, directory.through)]);
  }
  if (directory.through) {
    for (const entry of await lower.list(rel)) {
      if (upper?.children.has(entry.name) === true) continue;
      out.push([entry.name, new MergedEntry(entry.kind, undefined, entry.kind === 'directory')]);
    }
  }
  return out;
}

/** The child `name` of the merged directory `rel` whose entry is `directory`, links not followed. */
export function mergedChild(lower: LowerLayer, rel: NormalizedPath, directory: MergedEntry, name: string): MergedEntry | undefined {
  const path = joinPath(rel, name);
  const node = directory.upper?.type === 'directory' ? directory.upper.children.get(name) : undefined;
  if (node !== undefined) return node.type === 'whiteout' ? undefined : upperEntry(node, directory.through);
  if (!directory.through) return undefined;
  const found = lower.entry(path, directory.upper === undefined ? 0 : splitPath(path).length - 1);
  return found === undefined ? undefined : new MergedEntry(found.kind, undefined, found.kind === 'directory', found.stat);
}
