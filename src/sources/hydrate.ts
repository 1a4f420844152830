import {
  AbortError,
  InvalidArgumentError,
  LimitExceededError,
  NotSupportedError,
  ReadOnlyError,
  SnapshotRestoreError,
  isWorkspaceError,
} from '../workspace/errors.js';
import { trustOf, type WorkspaceTrust } from '../governance/trust.js';
import { copyBytes, handOver } from '../workspace/bytes.js';
import { displayPath, parentPath, type NormalizedPath } from '../workspace/paths.js';
import type { SkippedPath, SnapshotableWorkspace, Workspace, WriteFilesEntry, WriteFilesResult } from '../workspace/types.js';
import { AllowedRoots } from '../host-files/allow-list.js';
import { compare } from './copy-order.js';
import { Planner, SKIP, type PlannedFile, type PlannedLink } from './plan.js';
import { CreatedPaths } from './rollback.js';
import { parseSources, type HostSource, type HydrateOptions, type HydrateResult } from './schema.js';
import { PIN_DIRECTORIES, Pacer, SPECIAL, UNREADABLE } from './source.js';
import { ReadAhead } from './read-ahead.js';
import type { ReadJob } from './read-files.js';

export { defaultSourcePath } from './source-path.js';

/** A batch handed to the workspace's bulk write: this many files, or this many bytes, whichever comes first. */
const BATCH_FILES = 256;
const BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Hydration copies allow-listed host folders into a workspace, all or nothing:
 *
 * 1. **Plan** (`plan.ts`). Every source is resolved and checked against the allow-list, then walked (names
 *    sorted, so the result is deterministic) into one map of workspace path → file or directory. Later
 *    sources replace earlier files; directories merge; a file/directory clash fails here. `maxBytes` is
 *    checked as the walk goes, so an over-budget hydration fails before a single byte is written.
 * 2. **Copy.** A snapshot is taken, then files are read (`read-files.ts`; a large run on reader threads a
 *    bounded window ahead, `read-ahead.ts`, begun while the walk goes on) and handed to the workspace in
 *    batches, in path order, through the protocol's bulk write (`writeFiles`: every path checked by the
 *    shared layer, the backend's own fast path behind it; a workspace without it gets `writeBytes` and
 *    `mkdir`). Any failure — a workspace error, a file that grew past the budget since the walk, an abort,
 *    a throwing `onProgress` — restores the snapshot (and removes what the snapshots leave out, see
 *    `rollback.ts`) before the error is rethrown.
 *
 * Kinds: a file keeps its executable bit, and a link whose target stays inside its source is copied as a
 * link (see `linkInSource`); on a workspace without them (a driver without the optional primitives), bits
 * are dropped and such links skipped and reported.
 *
 * Hostile trees: names that cannot be workspace paths, names the backend reserves, paths over the creation
 * limits, symlinks leaving their source (unless followed, and then only into the allowed roots), FIFOs,
 * sockets and devices are skipped and reported. A file is opened with `O_NOFOLLOW`, and on Linux through a descriptor of its
 * directory whose real path was checked against the allow-list, so a file or a parent swapped for a link
 * after the walk is not read through (see `readHostFiles`).
 * No error or skipped entry names a host path: sources are identified by index and workspace path.
 */
export async function hydrate(
  workspace: SnapshotableWorkspace,
  sources: readonly HostSource[],
  options: HydrateOptions,
): Promise<HydrateResult> {
  try {
    return await copySources(workspace, sources, options);
  } catch (error) {
    // The signal's own DOMException, wherever it surfaced, becomes the typed error every long call throws.
    if (options?.signal?.aborted === true && error instanceof Error && error.name === 'AbortError' && !isWorkspaceError(error))
      throw new AbortError('hydration was aborted');
    throw error;
  }
}

async function copySources(
  workspace: SnapshotableWorkspace,
  sources: readonly HostSource[],
  options: HydrateOptions,
): Promise<HydrateResult> {
  if (workspace.readOnly) throw new ReadOnlyError(undefined, 'the workspace is read-only: cannot hydrate it');
  if (!Array.isArray(sources)) throw new InvalidArgumentError('sources must be an array of host sources');
  const parsed = parseSources(sources);
  const allowed = await AllowedRoots.resolve((options as Partial<HydrateOptions> | undefined)?.allowedHostRoots);
  const signal = options.signal;
  signal?.throwIfAborted();

  // Reading starts while the walk goes on: reads are only reads, nothing is written before every check passed.
  const walkedPaths: string[] = [];
  const job = readJob(workspace, allowed);
  const early = new ReadAhead(walkedPaths, job, undefined, { growing: true });
  const plan = new Planner(workspace, allowed, signal, (file) => {
    walkedPaths.push(file.real);
    early.grew();
  });
  let reads: ReadAhead | undefined;
  try {
    for (const [index, source] of parsed.entries()) await plan.addSource(index, source);
    const trust = trustOf(workspace);
    const hostRoots = [...plan.hostRoots].filter((root) => plan.entries.has(root));
    if (hostRoots.length > 0 && trust === undefined)
      throw new InvalidArgumentError(
        "includeGit: 'read-only' needs a workspace built by createWorkspace (one that can keep what hydration brings in read-only)",
      );

    const skipped = plan.skipped;
    await leaveOutDenied(workspace, trust, plan);
    const files = plannedFiles(plan);
    const leafDirectories = plan.leafDirectories();
    if (files.paths.length === 0 && leafDirectories.length === 0) return { files: 0, bytes: 0, skipped: sortSkipped(skipped) };
    const chosen = readsInCopyOrder(early, plan.walked, files.entries, job);
    reads = chosen;
    const copy = () => copyPlanned(workspace, plan, files, leafDirectories, options, chosen);
    return await (trust === undefined || hostRoots.length === 0 ? copy() : trust.protection.hostContent(hostRoots, copy));
  } finally {
    if (reads !== early) early.abandon();
  }
}

function readJob(workspace: Workspace, allowed: AllowedRoots): Omit<ReadJob, 'paths' | 'maxJobBytes'> {
  return {
    roots: [...allowed.roots],
    maxFileBytes: workspace.limits.maxWriteBytes,
    pinDirectories: PIN_DIRECTORIES,
    reasons: { unreadable: UNREADABLE, special: SPECIAL },
  };
}

/** The plan's files and links (two arrays in step, no pair per file), in path order. */
interface FilesToCopy {
  paths: NormalizedPath[];
  entries: (PlannedFile | PlannedLink)[];
}

function plannedFiles(plan: Planner): FilesToCopy {
  let paths: NormalizedPath[] = [];
  let entries: (PlannedFile | PlannedLink)[] = [];
  let sorted = true;
  plan.entries.forEach((entry, path) => {
    if (entry.kind === 'directory') return;
    if (sorted && paths.length > 0 && compare(paths[paths.length - 1] as string, path) > 0) sorted = false;
    paths.push(path);
    entries.push(entry);
  });
  // One source walks in path order (see `sortedForWalk`): only several sources need sorting.
  if (!sorted) {
    const order = Array.from(paths.keys()).sort((a, b) => compare(paths[a] as string, paths[b] as string));
    entries = order.map((index) => entries[index] as PlannedFile | PlannedLink);
    paths = order.map((index) => paths[index] as NormalizedPath);
  }
  return { paths, entries };
}

/**
 * The reads begun during the walk when it planned exactly the files to copy in the order the copy takes
 * them (one source, nothing replaced or left out since: the usual case), else reads from the start.
 */
function readsInCopyOrder(
  early: ReadAhead,
  walked: readonly PlannedFile[],
  files: readonly (PlannedFile | PlannedLink)[],
  job: Omit<ReadJob, 'paths' | 'maxJobBytes'>,
): ReadAhead {
  let same = true;
  let count = 0;
  for (let index = 0; index < files.length; index += 1) {
    const file = files[index] as PlannedFile | PlannedLink;
    if (file.kind !== 'file') continue;
    if (file !== walked[count]) same = false;
    count += 1;
  }
  if (same && count === walked.length) {
    early.complete();
    return early;
  }
  const planned: PlannedFile[] = [];
  for (const file of files) if (file.kind === 'file') planned.push(file);
  early.abandon();
  return new ReadAhead(
    planned.map((file) => file.real),
    job,
  );
}

/**
 * Takes the planned paths the workspace's policy denies out of the plan, each listed in `skipped`: a
 * denied file is left out, never a failure of the whole hydration. A denied directory takes all below it.
 */
async function leaveOutDenied(workspace: SnapshotableWorkspace, trust: WorkspaceTrust | undefined, plan: Planner): Promise<void> {
  if (trust === undefined || (workspace as { policy?: unknown }).policy === undefined) return;
  const denied = new Set<NormalizedPath>();
  const below = (path: NormalizedPath): boolean => {
    for (let current = parentPath(path); current !== ''; current = parentPath(current)) if (denied.has(current)) return true;
    return false;
  };
  for (const [path, entry] of [...plan.entries].sort((a, b) => compare(a[0], b[0]))) {
    if (below(path)) plan.entries.delete(path);
    else if (!(await trust.admits(path, entry.kind === 'symlink' ? 'any' : entry.kind))) {
      denied.add(path);
      plan.entries.delete(path);
      plan.skipped.push({ path: displayPath(path), reason: SKIP.denied });
    }
  }
}

async function copyPlanned(
  workspace: SnapshotableWorkspace,
  plan: Planner,
  files: FilesToCopy,
  leafDirectories: NormalizedPath[],
  options: HydrateOptions,
  reads: ReadAhead,
): Promise<HydrateResult> {
  const signal = options.signal;
  const skipped = plan.skipped;

  signal?.throwIfAborted();
  const created = await CreatedPaths.note(workspace, plannedPaths(plan));
  const before = await workspace.snapshot({ tag: 'before hydration' });
  let written = 0;
  let bytes = 0;
  let batch: WriteFilesEntry[] = leafDirectories.map((path) => ({ kind: 'directory', path }));
  let batchBytes = 0;
  let lastPath = '/';
  const kinds = { kept: true };
  const flush = async (): Promise<void> => {
    signal?.throwIfAborted();
    const result = await writeKinds(workspace, batch, kinds);
    const refused = new Set(result.skipped.map((entry) => entry.path));
    skipped.push(...result.skipped);
    for (const entry of batch) {
      if (entry.kind !== 'file' || refused.has(displayPath(entry.path))) continue;
      written += 1;
      bytes += entry.content.byteLength;
      lastPath = displayPath(entry.path);
      options.onProgress?.({ phase: 'write', done: written, files: written, bytes, path: lastPath });
      signal?.throwIfAborted();
    }
    batch = [];
    batchBytes = 0;
  };
  // Nobody else holds the bytes read: a workspace built by createWorkspace keeps them without a copy. They
  // are views of memory shared with other files (see readHostFiles): any other workspace gets its own copy.
  const keep = trustOf(workspace) === undefined ? (bytes: Uint8Array) => copyBytes(bytes) : handOver;
  try {
    const sourceBytes = new Map<number, number>();
    const pacer = new Pacer();
    const { paths, entries } = files;
    for (let index = 0; index < paths.length; index += 1) {
      const path = paths[index] as NormalizedPath;
      const file = entries[index] as PlannedFile | PlannedLink;
      signal?.throwIfAborted();
      if (pacer.due()) await pacer.yield();
      if (file.kind === 'symlink') {
        batch.push({ kind: 'symlink', path, target: file.target });
        continue;
      }
      const next = reads.next();
      const outcome = next instanceof Promise ? await next : next;
      if ('skip' in outcome) {
        skipped.push({ path: displayPath(path), reason: outcome.skip });
        continue;
      }
      const total = (sourceBytes.get(file.sourceIndex) ?? 0) + outcome.bytes.byteLength;
      sourceBytes.set(file.sourceIndex, total);
      const budget = plan.budgets[file.sourceIndex];
      if (budget !== undefined && total > budget) {
        throw new LimitExceededError(
          `hydration refused: ${plan.describe(file.sourceIndex)} grew past its maxBytes of ${budget} bytes while it was being copied; nothing was written`,
        );
      }
      batch.push({ kind: 'file', path, content: keep(outcome.bytes), executable: outcome.executable });
      batchBytes += outcome.bytes.byteLength;
      if (batch.length >= BATCH_FILES || batchBytes >= BATCH_BYTES) await flush();
    }
    if (batch.length > 0) await flush();
    options.onProgress?.({ phase: 'write', done: written, total: written, files: written, bytes, path: lastPath });
  } catch (error) {
    try {
      await workspace.restore(before);
      await created.remove(workspace);
    } catch (restoreError) {
      throw new SnapshotRestoreError(
        `hydration failed (${describeError(error)}) and the workspace could not be restored: ${describeError(restoreError)}`,
      );
    }
    throw error;
  }
  return { files: written, bytes, skipped: sortSkipped(skipped) };
}

/** Every planned path, sorted: already in order when one source was walked. */
function plannedPaths(plan: Planner): NormalizedPath[] {
  const paths = Array.from(plan.entries.keys());
  for (let index = 1; index < paths.length; index += 1)
    if (compare(paths[index - 1] as string, paths[index] as string) > 0) return paths.sort(compare);
  return paths;
}

/**
 * A batch written with its kinds while the workspace keeps them. A workspace without them refuses the
 * whole batch (`NotSupportedError`, every entry checked before the first write): from then on (`kinds.kept`
 * false) executable bits are dropped and links skipped, reported in the result.
 */
async function writeKinds(workspace: Workspace, entries: WriteFilesEntry[], kinds: { kept: boolean }): Promise<WriteFilesResult> {
  const asksForKind = (entry: WriteFilesEntry): boolean => entry.kind === 'symlink' || (entry.kind === 'file' && entry.executable === true);
  if (kinds.kept) {
    try {
      return await writeBatch(workspace, entries);
    } catch (error) {
      if (!(error instanceof NotSupportedError) || !entries.some(asksForKind)) throw error;
      kinds.kept = false;
    }
  }
  const plain: WriteFilesEntry[] = [];
  const links: SkippedPath[] = [];
  for (const entry of entries) {
    if (entry.kind === 'symlink') links.push({ path: displayPath(entry.path), reason: SKIP.noLinks });
    else plain.push(entry.kind === 'file' ? { ...entry, executable: false } : entry);
  }
  const result = await writeBatch(workspace, plain);
  return { ...result, skipped: [...result.skipped, ...links] };
}

/** The workspace's bulk write, or (for a workspace without one) the same through `mkdir` and `writeBytes`. */
async function writeBatch(workspace: Workspace, entries: WriteFilesEntry[]): Promise<WriteFilesResult> {
  if (workspace.writeFiles !== undefined) return workspace.writeFiles(entries);
  let files = 0;
  let bytes = 0;
  for (const entry of entries) {
    if (entry.kind === 'directory') await workspace.mkdir(entry.path, { parents: true, existOk: true });
    else if (entry.kind === 'symlink') await workspace.symlink(entry.target, entry.path);
    else {
      const executable = entry.executable === true ? { executable: true } : {};
      await workspace.writeBytes(entry.path, entry.content, { mode: 'overwrite', createParents: true, ...executable });
      files += 1;
      bytes += entry.content.byteLength;
    }
  }
  return { files, bytes, skipped: [] };
}

function describeError(error: unknown): string {
  if (isWorkspaceError(error)) return error.message;
  if (error instanceof Error && error.name === 'AbortError') return 'aborted';
  return error instanceof Error ? error.name : 'unknown error';
}

function sortSkipped(skipped: SkippedPath[]): SkippedPath[] {
  return skipped.sort((a, b) => compare(a.path, b.path) || compare(a.reason, b.reason));
}
