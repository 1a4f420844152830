import type { SnapshotEntry, SnapshotTree } from '../workspace/driver.js';
import type { LongCall } from '../workspace/progress.js';
import { ConflictError, IsADirectoryError, NotADirectoryError, WorkspaceError } from '../workspace/errors.js';
import { fromDriverError } from '../workspace/driver-errors.js';
import { compareStrings } from '../workspace/paths.js';
import type { DestinationState, ExportDestination } from './destination.js';
import { DEFAULT_PROTECT, ProtectRules, type ProtectedRoot } from '../governance/protect.js';
import { changedPaths } from '../snapshots/snapshot-tree.js';

export type ConflictPolicy = 'fail' | 'skip' | 'overwrite';

export interface ExportConflict {
  /** The workspace path. */
  path: string;
  reason: string;
}

export interface ExportResult {
  /** Workspace paths written (files and symlinks), sorted. In a dry run: what would be written. */
  written: string[];
  /** Workspace paths deleted at the destination, sorted. */
  deleted: string[];
  /** Destinations that differ from the baseline; with `overwrite` they are also in `written`/`deleted`. */
  conflicts: ExportConflict[];
  /**
   * Present when something was left out: changes to protected paths at the destination (version-control
   * internals and the workspace's other `protect` patterns), which an export never writes or deletes, and
   * symlinks whose target leads out of the destination, which an export never creates.
   */
  skipped?: ExportConflict[];
  dryRun: boolean;
}

/** `onConflict: 'fail'` found conflicts: nothing was written. `conflicts` lists them all. */
export class ExportConflictError extends ConflictError {
  readonly conflicts: ExportConflict[];

  constructor(conflicts: ExportConflict[]) {
    const shown = conflicts.slice(0, 5).map((conflict) => `${conflict.path} (${conflict.reason})`);
    const more = conflicts.length > 5 ? ` and ${conflicts.length - 5} more` : '';
    super(
      `nothing was written: ${conflicts.length} destination(s) changed since the baseline: ${shown.join(', ')}${more}`,
      conflicts[0]?.path,
    );
    this.conflicts = conflicts;
  }
}

/** An export that failed part way: `exported` says exactly what it had done. */
export class ExportIncompleteError extends WorkspaceError {
  readonly exported: ExportResult;

  constructor(cause: WorkspaceError, exported: ExportResult) {
    super(
      cause.code,
      `the export stopped at ${cause.path ?? '/'} (${cause.code}) after writing ${exported.written.length} and deleting ${exported.deleted.length} entries: ${cause.message}`,
      cause.path,
    );
    this.exported = exported;
  }
}

/** Where an export goes: a destination and the destination path of each workspace path it takes. */
export interface ExportTarget {
  destination: ExportDestination;
  /** The destination-relative path for a workspace path, or undefined when it is not exported here. */
  place(path: string): string | undefined;
  /**
   * A workspace made to hold a tree exactly (`pullSnapshot`) takes every link, as data. Omitted (a host
   * directory an export writes into): a link whose target leads out of the destination is left out.
   */
  anyLink?: true;
}

type Leaf = Exclude<SnapshotEntry, { kind: 'directory' }>;
interface Write {
  target: ExportTarget;
  path: string;
  rel: string;
  entry: { kind: 'file'; bytes: Uint8Array; mode: number } | { kind: 'symlink'; bytes: Uint8Array };
}
interface Removal {
  target: ExportTarget;
  path: string;
  rel: string;
}

/** Everything an export will do, decided before anything is written. */
export interface ExportPlan {
  writes: Write[];
  deletes: Removal[];
  /** Directories the workspace added (created when missing) or removed (removed when left empty). */
  makeDirectories: Removal[];
  removeDirectories: Removal[];
  conflicts: ExportConflict[];
  /** Changes left out because the destination path is protected (one entry per protected root). */
  skipped: ExportConflict[];
  /** Links left out because their target leads out of the destination (see `ExportTarget.anyLink`). */
  refusedLinks: ExportConflict[];
}

/**
 * Decides what exporting the change from `from` to `to` does at each target. A destination entry that
 * already holds the new content needs nothing; one that holds the `from` version (or is absent where `from`
 * had nothing) is replaced; anything else is a conflict, handled by `policy`. A path the export cannot
 * reach without replacing something the change does not remove (a file, link or foreign directory in the
 * way) is a clash: an `ENOTDIR`/`EISDIR` error, before anything is written.
 */
export async function planExport(
  from: SnapshotTree,
  to: SnapshotTree,
  targets: ExportTarget[],
  policy: ConflictPolicy,
  call?: LongCall,
  protect: ProtectedAt = protectRulesOf({}),
): Promise<ExportPlan> {
  const plan: ExportPlan = {
    writes: [],
    deletes: [],
    makeDirectories: [],
    removeDirectories: [],
    conflicts: [],
    skipped: [],
    refusedLinks: [],
  };
  const changes = await changedPaths(from, to, { directories: true });
  for (const target of targets) {
    const protectedRoots = new Set<string>();
    const pending: { path: string; rel: string; state: DestinationState; directory: boolean; want?: Leaf; base?: Leaf }[] = [];
    for (const change of changes) {
      call?.step('plan', change.path);
      const rel = target.place(change.path);
      if (rel === undefined) continue;
      const found = await protect(rel);
      if (found !== undefined) {
        // Reported once, as the workspace path of the protected root (the destination path may be shorter).
        const shown = change.path.endsWith(rel) ? change.path.slice(0, change.path.length - rel.length + found.root.length) : change.path;
        if (!protectedRoots.has(found.root)) plan.skipped.push({ path: shown, reason: protectedReason(found.pattern) });
        protectedRoots.add(found.root);
        continue;
      }
      const state = await target.destination.state(rel);
      if (change.directory === true) {
        if (change.status === 'deleted') plan.removeDirectories.push({ target, path: change.path, rel });
        else pending.push({ path: change.path, rel, state, directory: true });
        continue;
      }
      const wanted = await to.entry(change.path);
      // A file the workspace replaced by a directory: the directory's own change creates it.
      if (wanted?.kind === 'directory' && state.kind === 'directory') continue;
      const want = leaf(wanted);
      if (want?.kind === 'symlink' && target.anyLink !== true) {
        const linkTarget = Buffer.from(await want.bytes()).toString();
        const out = leadsOut(rel, linkTarget);
        if (out !== undefined) {
          const why = out === 'out' ? 'leads out of the destination' : 'climbs (..) after a name, which may be a link leading out';
          plan.refusedLinks.push({
            path: change.path,
            reason: `a symlink to ${JSON.stringify(linkTarget)} ${why}: an export never creates one`,
          });
          continue;
        }
      }
      const base = leaf(await from.entry(change.path));
      if (state.kind === 'blocked' || (state.kind === 'directory' && want !== undefined)) {
        pending.push({ path: change.path, rel, state, directory: false, ...(want && { want }), ...(base && { base }) });
        continue;
      }
      await decide(plan, target, change.path, rel, state, want, base, policy);
    }
    // Second pass: what stands in the way is fine when this export removes it first.
    const removed = new Set(plan.deletes.filter((removal) => removal.target === target).map((removal) => removal.rel));
    const removedDirectories = new Set(plan.removeDirectories.filter((removal) => removal.target === target).map((removal) => removal.rel));
    for (const item of pending) {
      let state = item.state;
      if (state.kind === 'blocked') {
        if (!removed.has(state.by)) {
          const what = state.link ? 'a symlink' : 'a file';
          throw new NotADirectoryError(item.path, `${what} stands at the destination where ${item.path} needs a directory: ${state.by}`);
        }
        state = { kind: 'missing' };
      }
      if (item.directory) {
        if (state.kind === 'missing') plan.makeDirectories.push({ target, path: item.path, rel: item.rel });
        else if (state.kind !== 'directory' && !removed.has(item.rel))
          throw new NotADirectoryError(item.path, `a file stands at the destination where the workspace has the directory ${item.path}`);
        else if (state.kind !== 'directory') plan.makeDirectories.push({ target, path: item.path, rel: item.rel });
        continue;
      }
      if (state.kind === 'directory') {
        const leaves = await target.destination.leavesBelow(item.rel);
        if (!removedDirectories.has(item.rel) || !leaves.every((path) => removed.has(path)))
          throw new IsADirectoryError(item.path, `a directory stands at the destination where the workspace has the file ${item.path}`);
        state = { kind: 'missing' };
      }
      await decide(plan, target, item.path, item.rel, state, item.want, item.base, policy);
    }
  }
  return plan;
}

/**
 * The baseline's bytes; `null` when the baseline cannot say (an overlay's lower file changed on disk since
 * the session saw it: `ConflictError`), which no destination state holds, so the path is a conflict.
 */
async function baseBytes(base: Leaf | undefined): Promise<Uint8Array | undefined | null> {
  if (base === undefined) return undefined;
  try {
    return await base.bytes();
  } catch (error) {
    if (error instanceof ConflictError) return null;
    throw error;
  }
}

/** The protected root a destination path lies in, when the export must leave it alone. */
export type ProtectedAt = (rel: string) => ProtectedRoot | undefined | Promise<ProtectedRoot | undefined>;

/** What an export never writes or deletes at a destination: the workspace's `protect` patterns (or the default). */
export function protectRulesOf(workspace: object): ProtectedAt {
  const patterns = (workspace as { protect?: unknown }).protect;
  const rules = new ProtectRules(Array.isArray(patterns) ? (patterns as string[]) : DEFAULT_PROTECT);
  return (rel) => rules.rootOf(rel);
}

/**
 * Whether (and why) a link at destination path `rel` with target text `target` may lead out of the destination: an
 * absolute target (the host would resolve it), `..` climbing above the destination read from the link's
 * directory, or a `..` after a name. The link's own directories are real (the destination makes them so),
 * so leading `..` climb real directories; but a name may itself be a link (`b -> .` makes `b/..` the
 * destination's parent), so a `..` after one is judged to lead out. Every link an export writes obeys
 * this, so a path of names through them stays inside.
 */
function leadsOut(rel: string, target: string): 'out' | 'up-after-name' | undefined {
  if (target.startsWith('/')) return 'out';
  let depth = rel.split('/').length - 1;
  let named = false;
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') named = true;
    else if (named) return 'up-after-name';
    depth += segment === '..' ? -1 : 1;
    if (depth < 0) return 'out';
  }
  return undefined;
}

function protectedReason(pattern: string): string {
  return `protected at the destination (protect: '${pattern}'): an export never writes or deletes there`;
}

function leaf(entry: SnapshotEntry | undefined): Leaf | undefined {
  return entry === undefined || entry.kind === 'directory' ? undefined : entry;
}

async function decide(
  plan: ExportPlan,
  target: ExportTarget,
  path: string,
  rel: string,
  state: DestinationState,
  want: Leaf | undefined,
  base: Leaf | undefined,
  policy: ConflictPolicy,
): Promise<void> {
  const wanted = want === undefined ? undefined : await want.bytes();
  const executable = want?.kind === 'file' && want.executable;
  // Modes: backends without executable bits say "not executable" for every file, so only an exec
  // bit the workspace has, or a change of it since `from`, is carried to the destination.
  const modeChanged = want?.kind === 'file' && base?.kind === 'file' && base.executable !== want.executable;
  const modeHeld = state.kind !== 'file' || (modeChanged ? state.executable === executable : !executable || state.executable);
  if (await holds(state, want, wanted)) {
    if (modeHeld) return;
  } else if (!(await holds(state, base, await baseBytes(base)))) {
    const reason =
      state.kind === 'missing'
        ? 'deleted at the destination since the baseline'
        : state.kind === 'directory'
          ? 'a directory stands at the destination'
          : base === undefined
            ? 'exists at the destination with other content'
            : 'changed at the destination since the baseline';
    plan.conflicts.push({ path, reason });
    if (policy !== 'overwrite') return;
    if (state.kind === 'directory' || state.kind === 'other') return;
  }
  if (want === undefined || wanted === undefined) {
    if (state.kind !== 'missing') plan.deletes.push({ target, path, rel });
    return;
  }
  // The destination's other permission bits are kept.
  const existing = state.kind === 'file' ? state.mode : 0o644;
  const mode = executable ? existing | ((existing & 0o444) >> 2) | 0o100 : modeChanged ? existing & ~0o111 : existing;
  plan.writes.push({
    target,
    path,
    rel,
    entry: want.kind === 'symlink' ? { kind: 'symlink', bytes: wanted } : { kind: 'file', bytes: wanted, mode },
  });
}

async function holds(state: DestinationState, entry: Leaf | undefined, bytes: Uint8Array | undefined | null): Promise<boolean> {
  if (bytes === null) return false;
  if (entry === undefined || bytes === undefined) return state.kind === 'missing';
  if (state.kind !== entry.kind) return false;
  return Buffer.compare(state.bytes, bytes) === 0;
}

/**
 * Carries out a plan (or, in a dry run, only reports it): deletions first (deepest first), then directories
 * the workspace removed (when left empty), then directories it added, then writes, each atomic. `call`
 * reports each entry (phase `write`) and is checked before each: an abort before the first change throws
 * `AbortError` with nothing changed, a later one `ExportIncompleteError` (`ABORT_ERR`) saying exactly what
 * was done.
 */
export async function applyExport(
  plan: ExportPlan,
  options: { dryRun: boolean; policy: ConflictPolicy; call?: LongCall },
): Promise<ExportResult> {
  const byPath = (a: { path: string }, b: { path: string }) => compareStrings(a.path, b.path);
  const result: ExportResult = { written: [], deleted: [], conflicts: [...plan.conflicts].sort(byPath), dryRun: options.dryRun };
  const skipped = [...plan.skipped, ...plan.refusedLinks];
  if (skipped.length > 0) result.skipped = skipped.sort(byPath);
  if (options.dryRun) {
    result.written = plan.writes.map((write) => write.path).sort(compareStrings);
    result.deleted = plan.deletes.map((removal) => removal.path).sort(compareStrings);
    return result;
  }
  if (options.policy === 'fail' && plan.conflicts.length > 0) throw new ExportConflictError(result.conflicts);
  const deepestFirst = (a: Removal, b: Removal) => compareStrings(b.rel, a.rel);
  const call = options.call;
  const total = plan.deletes.length + plan.removeDirectories.length + plan.makeDirectories.length + plan.writes.length;
  call?.report({ phase: 'write', done: call.done, total: call.done + total });
  let current = '';
  let changed = 0;
  const next = (path: string): void => {
    call?.check();
    current = path;
  };
  const did = (path: string): void => {
    changed += 1;
    call?.tick('write', path);
  };
  try {
    for (const removal of [...plan.deletes].sort(deepestFirst)) {
      next(removal.path);
      await removal.target.destination.remove(removal.rel);
      result.deleted.push(removal.path);
      did(removal.path);
    }
    for (const removal of [...plan.removeDirectories].sort(deepestFirst)) {
      next(removal.path);
      await removal.target.destination.removeEmptyDirectory(removal.rel);
      did(removal.path);
    }
    for (const directory of [...plan.makeDirectories].sort(byPath)) {
      next(directory.path);
      await directory.target.destination.makeDirectory(directory.rel);
      did(directory.path);
    }
    for (const write of [...plan.writes].sort(byPath)) {
      next(write.path);
      await write.target.destination.put(write.rel, write.entry);
      result.written.push(write.path);
      did(write.path);
    }
  } catch (error) {
    if (changed === 0 && call?.signal?.aborted === true) throw error;
    throw new ExportIncompleteError(fromDriverError(error, current), result);
  }
  result.written.sort(compareStrings);
  result.deleted.sort(compareStrings);
  return result;
}
