import { changedPaths } from '../snapshots/snapshot-tree.js';
import { sameBytes } from '../workspace/bytes.js';
import { compareStrings, splitPath } from '../workspace/paths.js';
import type { SnapshotEntry, SnapshotTree } from '../workspace/types.js';
import { mergeText, type ConflictRegion } from './merge-text.js';

export type { ConflictRegion } from './merge-text.js';

/** What one side holds at a conflicting path (bytes are read with the workspace, not carried here). */
export type MergeSide =
  { kind: 'file'; executable: boolean; sizeBytes: number } | { kind: 'symlink'; target: string } | { kind: 'directory' };

/**
 * A path the merge cannot decide, as data:
 * - `content`: both sides changed the file (or the link's target) differently; `regions` for text,
 *   `binary: true` for bytes that are not text;
 * - `add-add`: both sides added it, differently (`regions` against an empty base for text);
 * - `delete-modify`: one side deleted what the other changed;
 * - `mode`: both added the same bytes, one executable and one not;
 * - `type`: a file, a link and a directory disagree (one side made a directory a file while the other
 *   changed something in it, say).
 */
export interface MergeConflict {
  path: string;
  kind: 'content' | 'delete-modify' | 'add-add' | 'mode' | 'type';
  base?: MergeSide;
  ours?: MergeSide;
  theirs?: MergeSide;
  regions?: ConflictRegion[];
  binary?: true;
}

/** One step that brings `ours` to the merged tree. */
export type MergeChange =
  /** `modeChanged`: ours' file there has the other executable bit. */
  | { path: string; kind: 'write'; content: Uint8Array; executable: boolean; modeChanged?: true }
  | { path: string; kind: 'symlink'; target: string }
  | { path: string; kind: 'delete' }
  | { path: string; kind: 'mkdir' }
  /** The directory goes when nothing is left in it (the side that removed it removed what it knew of). */
  | { path: string; kind: 'rmdir' };

export interface TreeMerge {
  /** What to do to `ours` for the changes that merged cleanly, sorted by path (see `applyMerge` for the order they run in). */
  changes: MergeChange[];
  conflicts: MergeConflict[];
  /**
   * What `{ conflicts: 'markers' }` also writes: each text conflict's file with git's diff3-style markers,
   * a deleted-and-modified file as modified (as git leaves it); other conflicts keep ours.
   */
  markers: MergeChange[];
}

type Kind = 'absent' | SnapshotEntry['kind'];

/** A tree entry whose bytes are read once, however often the merge asks. */
class Leaf {
  readonly kind: Kind;
  readonly executable: boolean;
  #bytes: Promise<Uint8Array> | undefined;

  constructor(readonly entry: SnapshotEntry | undefined) {
    this.kind = entry?.kind ?? 'absent';
    this.executable = entry?.kind === 'file' && entry.executable;
  }

  bytes(): Promise<Uint8Array> {
    const entry = this.entry;
    if (entry === undefined || entry.kind === 'directory') return Promise.resolve(new Uint8Array(0));
    this.#bytes ??= entry.bytes();
    return this.#bytes;
  }

  async side(): Promise<MergeSide | undefined> {
    if (this.kind === 'absent') return undefined;
    if (this.kind === 'directory') return { kind: 'directory' };
    const bytes = await this.bytes();
    if (this.kind === 'symlink') return { kind: 'symlink', target: new TextDecoder().decode(bytes) };
    return { kind: 'file', executable: this.executable, sizeBytes: bytes.length };
  }
}

async function same(a: Leaf, b: Leaf): Promise<boolean> {
  if (a.kind !== b.kind || a.executable !== b.executable) return false;
  if (a.kind === 'absent' || a.kind === 'directory') return true;
  return sameBytes(await a.bytes(), await b.bytes());
}

/**
 * A three-way merge of `ours` and `theirs`, which both descend from `base`: what to do to `ours` so that it
 * also holds what `theirs` changed, and what cannot be decided. Only paths either side changed are looked
 * at: trees of one store (or of stores that name contents alike, as git's) skip every unchanged subtree by
 * identity, so the cost follows the change; other trees are walked (and compared where they may differ).
 * Files are merged line-wise ({@link mergeText}), executable bits and link targets as values: a side that
 * changed one wins, two different changes conflict.
 */
export async function mergeTrees(base: SnapshotTree, ours: SnapshotTree, theirs: SnapshotTree): Promise<TreeMerge> {
  const [oursChanges, theirsChanges] = await Promise.all([
    changedPaths(base, ours, { directories: true }),
    changedPaths(base, theirs, { directories: true }),
  ]);
  const oursChanged = new Set(oursChanges.map((change) => change.path));
  const theirsChanged = new Set(theirsChanges.map((change) => change.path));
  const oursBelow = ancestorsOf(oursChanged);
  const theirsBelow = ancestorsOf(theirsChanged);
  const paths = [...new Set([...oursChanged, ...theirsChanged])].sort(compareStrings);
  const merge: TreeMerge = { changes: [], conflicts: [], markers: [] };
  // A directory in a `type` conflict stands for everything below it.
  const settled = new Set<string>();
  for (const path of paths) {
    if (ancestors(path).some((ancestor) => settled.has(ancestor))) continue;
    const [b, o, t] = (await Promise.all([base.entry(path), ours.entry(path), theirs.entry(path)])).map((entry) => new Leaf(entry)) as [
      Leaf,
      Leaf,
      Leaf,
    ];
    const oChanged = oursChanged.has(path) && !(await same(b, o));
    const tChanged = theirsChanged.has(path) && !(await same(b, t));
    const conflict = async (kind: MergeConflict['kind'], extra: Partial<MergeConflict> = {}): Promise<void> => {
      merge.conflicts.push(await conflictOf(path, kind, b, o, t, extra));
      if (o.kind === 'directory' || t.kind === 'directory') settled.add(path);
    };
    if (tChanged && !oChanged) {
      // Theirs made a file or link of a directory ours changed something in.
      if ((t.kind === 'file' || t.kind === 'symlink') && oursBelow.has(path)) await conflict('type');
      else merge.changes.push(...(await take(path, t, o)));
    } else if (oChanged && !tChanged) {
      if ((o.kind === 'file' || o.kind === 'symlink') && theirsBelow.has(path)) await conflict('type');
    } else if (oChanged && tChanged && !(await same(o, t))) {
      await mergeBoth(path, b, o, t, merge, conflict);
    }
  }
  return merge;
}

/** Both sides changed `path`, differently. */
async function mergeBoth(
  path: string,
  b: Leaf,
  o: Leaf,
  t: Leaf,
  merge: TreeMerge,
  conflict: (kind: MergeConflict['kind'], extra?: Partial<MergeConflict>) => Promise<void>,
): Promise<void> {
  // Deleting a file and making a directory there agree: the directory stays (its files merge on their own).
  if (o.kind === 'absent' && t.kind === 'directory') merge.changes.push({ path, kind: 'mkdir' });
  if ((o.kind === 'absent' && t.kind === 'directory') || (t.kind === 'absent' && o.kind === 'directory')) return;
  if (o.kind === 'absent' || t.kind === 'absent') {
    await conflict('delete-modify');
    // As git leaves it: the modified file in place.
    if (o.kind === 'absent') merge.markers.push(...(await take(path, t, o)));
    return;
  }
  if (o.kind !== t.kind) return conflict('type');
  if (o.kind === 'directory') return;
  const added = b.kind !== o.kind;
  if (o.kind === 'symlink') return conflict(added ? 'add-add' : 'content');
  // Two files: bytes, then the executable bit, each merged on its own.
  const baseBytes = added ? undefined : await b.bytes();
  const [oursBytes, theirsBytes] = await Promise.all([o.bytes(), t.bytes()]);
  const executable = added
    ? o.executable === t.executable
      ? o.executable
      : undefined
    : o.executable !== b.executable
      ? o.executable
      : t.executable;
  let content: Uint8Array | undefined;
  if (sameBytes(oursBytes, theirsBytes)) content = oursBytes;
  else if (baseBytes !== undefined && sameBytes(oursBytes, baseBytes)) content = theirsBytes;
  else if (baseBytes !== undefined && sameBytes(theirsBytes, baseBytes)) content = oursBytes;
  const text = content === undefined ? mergeText(baseBytes, oursBytes, theirsBytes, path) : { kind: 'clean' as const, content };
  const kind = added ? 'add-add' : 'content';
  if (text.kind === 'binary') return conflict(kind, { binary: true });
  if (text.kind === 'conflict') {
    await conflict(kind, { regions: text.regions });
    merge.markers.push(write(path, text.markers, executable ?? o.executable, o));
    return;
  }
  if (executable === undefined) {
    await conflict('mode');
    merge.markers.push(write(path, text.content, o.executable, o));
    return;
  }
  if (!sameBytes(text.content, oursBytes) || executable !== o.executable) merge.changes.push(write(path, text.content, executable, o));
}

function write(path: string, content: Uint8Array, executable: boolean, current: Leaf): MergeChange {
  const change: MergeChange = { path, kind: 'write', content, executable };
  if (current.kind === 'file' && current.executable !== executable) change.modeChanged = true;
  return change;
}

/** The steps that replace what ours holds at `path` (`current`) with theirs (`next`). */
async function take(path: string, next: Leaf, current: Leaf): Promise<MergeChange[]> {
  const steps: MergeChange[] = [];
  // A link is replaced, never written through; a directory goes when emptied.
  if (current.kind === 'symlink' || (current.kind === 'file' && next.kind !== 'file')) steps.push({ path, kind: 'delete' });
  if (current.kind === 'directory' && next.kind !== 'directory') steps.push({ path, kind: 'rmdir' });
  if (next.kind === 'directory' && current.kind !== 'directory') steps.push({ path, kind: 'mkdir' });
  if (next.kind === 'file') steps.push(write(path, await next.bytes(), next.executable, current));
  if (next.kind === 'symlink') steps.push({ path, kind: 'symlink', target: new TextDecoder().decode(await next.bytes()) });
  return steps;
}

async function conflictOf(
  path: string,
  kind: MergeConflict['kind'],
  b: Leaf,
  o: Leaf,
  t: Leaf,
  extra: Partial<MergeConflict>,
): Promise<MergeConflict> {
  const conflict: MergeConflict = { path, kind };
  const [base, ours, theirs] = await Promise.all([b.side(), o.side(), t.side()]);
  if (base !== undefined) conflict.base = base;
  if (ours !== undefined) conflict.ours = ours;
  if (theirs !== undefined) conflict.theirs = theirs;
  return { ...conflict, ...extra };
}

function ancestors(path: string): string[] {
  const names = splitPath(path);
  return names.slice(0, -1).map((_, index) => names.slice(0, index + 1).join('/'));
}

/** Every directory that holds one of `paths`, at any depth. */
function ancestorsOf(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const path of paths) for (const ancestor of ancestors(path)) out.add(ancestor);
  return out;
}
