import * as fs from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import picomatch from 'picomatch';
import { AllowedRoots } from '../host-files/allow-list.js';
import { defaultSourcePath } from '../sources/source-path.js';
import type { HostSource } from '../sources/schema.js';
import { FileNotFoundError, PathEscapeError, SnapshotRestoreError } from '../workspace/errors.js';
import { displayPath, isSameOrInside, normalizePath, relativeTo } from '../workspace/paths.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { Destination } from './destination.js';
import { exportSettings } from './export.js';
import { applyExport, planExport, protectRulesOf, type ConflictPolicy, type ExportResult, type ExportTarget } from './export-plan.js';

/** `signal` and `onProgress` (phases `plan`, then `write`): see `LongCallOptions` and `applyExport`. */
export interface WriteBackOptions extends LongCallOptions {
  /** Write nothing; report what would be written, deleted and in conflict. */
  dryRun?: boolean;
  /** A host file changed since hydration: `fail` (default) writes nothing, `skip` leaves it, `overwrite` replaces it. */
  onConflict?: ConflictPolicy;
}

/**
 * Writes the changes a hydrated workspace made since `baseline` (the state right after hydration) back to
 * each writable source's host path, with `exportTo`'s conflict rules against the baseline. All sources are
 * planned before anything is written, so `fail` writes nothing anywhere. Returns the result and the
 * snapshot that becomes the new baseline (undefined when it must not: a dry run, or conflicts skipped or
 * links refused, which must be found again next time).
 */
export async function writeBackToSources(
  workspace: SnapshotableWorkspace,
  sources: readonly HostSource[],
  allowedHostRoots: readonly string[],
  baseline: WorkspaceSnapshot | undefined,
  options: WriteBackOptions | undefined,
): Promise<{ result: ExportResult; baseline: WorkspaceSnapshot | undefined }> {
  const { dryRun, policy } = exportSettings(options);
  if (baseline === undefined) throw new SnapshotRestoreError('nothing to write back: the session was not hydrated from host sources');
  const writable = sources.filter((source) => source.readOnly !== true);
  const allowed = writable.length === 0 ? undefined : await AllowedRoots.resolve(allowedHostRoots, 'write-back');
  const targets: ExportTarget[] = [];
  for (const source of writable) targets.push(await sourceTarget(source, allowed as AllowedRoots));
  return LongCall.start(options, 'writeBack').run(async (call) => {
    const read = { signal: call.forward.signal };
    const from = await workspace.snapshotTree(baseline, read);
    const state = await workspace.snapshot({ tag: 'write-back', ...read });
    const plan = await planExport(from, await workspace.snapshotTree(state, read), targets, policy, call, protectRulesOf(workspace));
    const result = await applyExport(plan, { dryRun, policy, call });
    // Skipped conflicts and refused links stay changes since the baseline: found and reported again next time.
    const keepsChanges = (policy === 'skip' && result.conflicts.length > 0) || plan.refusedLinks.length > 0;
    return { result, baseline: dryRun || keepsChanges ? undefined : state };
  });
}

/** Where a source's workspace paths go on the host: its (real) host path, `include`/`exclude` applied. */
async function sourceTarget(source: HostSource, allowed: AllowedRoots): Promise<ExportTarget> {
  const sourcePath = normalizePath(source.path ?? defaultSourcePath(source.hostPath));
  const shown = displayPath(sourcePath);
  let real: string;
  try {
    real = await fs.realpath(source.hostPath);
  } catch {
    throw new FileNotFoundError(shown, `the host path of the source at ${shown} no longer exists`);
  }
  if (!allowed.contains(real))
    throw new PathEscapeError(shown, `the host path of the source at ${shown} lies outside the allowed host roots`);
  if (!(await fs.stat(real)).isDirectory()) {
    const name = basename(real);
    return { destination: new Destination(dirname(real)), place: (path) => (path === sourcePath ? name : undefined) };
  }
  const isIncluded = source.include === undefined ? () => true : picomatch(source.include, { dot: true });
  const isExcluded = source.exclude === undefined || source.exclude.length === 0 ? () => false : picomatch(source.exclude, { dot: true });
  return {
    destination: new Destination(real),
    place(path) {
      if (path === sourcePath || !isSameOrInside(path, sourcePath)) return undefined;
      const relative = relativeTo(path, sourcePath);
      // Hydration never went into an excluded directory, so nothing below one goes back either.
      const names = relative.split('/');
      for (let depth = 1; depth <= names.length; depth += 1) if (isExcluded(names.slice(0, depth).join('/'))) return undefined;
      return isIncluded(relative) ? relative : undefined;
    },
  };
}
