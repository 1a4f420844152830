import { InvalidArgumentError, NotSupportedError } from '../workspace/errors.js';
import { compareStrings, splitPath } from '../workspace/paths.js';
import type { SnapshotableWorkspace, SnapshotTree, WorkspaceSnapshot, WriteFilesEntry } from '../workspace/types.js';
import { mergeTrees, type MergeChange, type MergeConflict } from './merge-trees.js';

export { mergeTrees, type MergeChange, type MergeConflict, type MergeSide, type TreeMerge, type ConflictRegion } from './merge-trees.js';

/** What to do with conflicts: return them and change nothing (`report`, the default), or write git's markers. */
export type MergeConflictMode = 'report' | 'markers';

export interface MergeOptions {
  /**
   * The snapshot both sides descend from, in either side's workspace. Default: the fork point, when one
   * session was forked from the other (`session.fork()`, at any depth) or both from a third; required
   * otherwise (a workspace, or sessions not related by a fork).
   */
  base?: WorkspaceSnapshot;
  /** `report` (default): with a conflict, change nothing and return the conflicts; `markers`: see docs/merge.md. */
  conflicts?: MergeConflictMode;
}

export interface MergeResult {
  /** True when the workspace changed: a clean merge, or one written with `conflicts: 'markers'`. */
  applied: boolean;
  /** The paths the merge wrote or removed, sorted (none when it was not applied). */
  merged: string[];
  /** What could not be merged, sorted by path. With `markers`, text conflicts are in their files too. */
  conflicts: MergeConflict[];
}

/**
 * Merges `theirs` into `workspace` (ours, its live state) against `base`. With a conflict and `report`,
 * nothing is written. Otherwise the changes are applied through the workspace's protocol methods (policy,
 * `protect` rules, limits and audit apply); a refusal stops the merge with that error, and the caller undoes
 * what was written (a session runs this as one call, rolled back on failure).
 */
export async function mergeInto(
  workspace: SnapshotableWorkspace,
  theirs: SnapshotTree,
  base: SnapshotTree,
  conflicts: MergeConflictMode = 'report',
): Promise<MergeResult> {
  if (conflicts !== 'report' && conflicts !== 'markers')
    throw new InvalidArgumentError(`conflicts must be 'report' or 'markers', got ${JSON.stringify(conflicts)}`);
  const merge = await mergeTrees(base, await workspace.snapshotTree(), theirs);
  if (merge.conflicts.length > 0 && conflicts === 'report') return { applied: false, merged: [], conflicts: merge.conflicts };
  const changes = conflicts === 'markers' ? [...merge.changes, ...merge.markers] : merge.changes;
  const merged = await applyMerge(workspace, changes);
  return { applied: merged.length > 0, merged, conflicts: merge.conflicts };
}

/**
 * Runs merge steps in the order that keeps each possible: removals deepest first (a directory after what
 * was in it), then directories shallowest first, then files in one bulk write, then links. Returns the
 * paths it changed, sorted.
 */
export async function applyMerge(workspace: SnapshotableWorkspace, changes: readonly MergeChange[]): Promise<string[]> {
  const kept = new Set<string>();
  const of = <K extends MergeChange['kind']>(kind: K) =>
    changes.filter((change): change is Extract<MergeChange, { kind: K }> => change.kind === kind);
  const deepestFirst = (a: MergeChange, b: MergeChange) => splitPath(b.path).length - splitPath(a.path).length;
  const removals = [...of('delete'), ...of('rmdir')].sort(deepestFirst);
  for (const change of removals) {
    if (change.kind === 'delete') await workspace.delete(change.path);
    // A directory ours added something to (that theirs never saw) stays.
    else if ((await workspace.exists(change.path)) && (await workspace.list(change.path)).length === 0) await workspace.delete(change.path);
    else kept.add(change.path);
  }
  for (const change of of('mkdir').sort((a, b) => deepestFirst(b, a))) await workspace.mkdir(change.path, { parents: true, existOk: true });
  // A write sets the executable bit of a file it creates: where ours' file has the other bit, and the
  // workspace cannot set it (`setExecutable`), the file is replaced.
  const setExecutable = (workspace as { setExecutable?: (path: string, executable: boolean) => Promise<void> }).setExecutable;
  const modes = of('write').filter((change) => change.modeChanged === true);
  if (typeof setExecutable !== 'function') for (const { path } of modes) await workspace.delete(path);
  const files: WriteFilesEntry[] = of('write').map(({ path, content, executable }) => ({ kind: 'file', path, content, executable }));
  if (files.length > 0 && workspace.writeFiles !== undefined) {
    const { skipped } = await workspace.writeFiles(files);
    const [first] = skipped;
    // A name the backend reserves cannot hold their file: the merge would be partial.
    if (first !== undefined) throw new NotSupportedError(`the merge cannot write ${first.path}: ${first.reason}`);
  } else for (const file of files) if (file.kind === 'file') await workspace.writeBytes(file.path, file.content);
  if (typeof setExecutable === 'function') for (const { path, executable } of modes) await setExecutable.call(workspace, path, executable);
  for (const { path, target } of of('symlink')) {
    const symlink = (workspace as { symlink?: (target: string, path: string) => Promise<void> }).symlink;
    if (typeof symlink !== 'function')
      throw new NotSupportedError(`the ${workspace.backend} backend cannot create links (merging ${path})`);
    await symlink.call(workspace, target, path);
  }
  return [...new Set(changes.map((change) => change.path))].filter((path) => !kept.has(path)).sort(compareStrings);
}
