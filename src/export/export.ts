import * as fs from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { AllowedRoots } from '../host-files/allow-list.js';
import type { SnapshotTree } from '../workspace/driver.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';
import { InvalidArgumentError, NotADirectoryError, PathEscapeError } from '../workspace/errors.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { Destination } from './destination.js';
import { applyExport, planExport, protectRulesOf, type ConflictPolicy, type ExportResult } from './export-plan.js';
import { snapshotTree } from '../snapshots/snapshot-tree.js';

/** `signal` and `onProgress` (phases `plan`, then `write`): see `LongCallOptions` and `applyExport`. */
export interface ExportOptions extends LongCallOptions {
  /** Host directories the destination must lie in (after resolving links). Required. */
  allowedHostRoots: readonly string[];
  /** Export the changes since this snapshot. Default: the whole tree (against an empty destination baseline). */
  from?: WorkspaceSnapshot;
  /** Write nothing; report what would be written, deleted and in conflict. Never throws a `ConflictError`. */
  dryRun?: boolean;
  /** A destination entry that differs from the `from` version: `fail` (default) writes nothing, `skip` leaves it, `overwrite` replaces it. */
  onConflict?: ConflictPolicy;
}

/**
 * Writes a workspace's changes since `from` (default: everything) into the host directory `hostDir`,
 * created when missing. See docs/export.md for the conflict rules; each file is written atomically and
 * nothing is written through a symlink. Bad input (a destination outside `allowedHostRoots`, a `from` this
 * workspace cannot read, a file/directory clash at the destination) throws before anything is written.
 */
export async function exportTo(workspace: SnapshotableWorkspace, hostDir: string, options: ExportOptions): Promise<ExportResult> {
  const { dryRun, policy } = exportSettings(options);
  if (typeof hostDir !== 'string' || hostDir === '' || hostDir.includes('\0'))
    throw new InvalidArgumentError('hostDir must be a host path');
  const allowed = await AllowedRoots.resolve(options.allowedHostRoots, 'export');
  return LongCall.start(options, 'export').run(async (call) => {
    const read = { signal: call.forward.signal };
    const from = options.from === undefined ? EMPTY_TREE : await workspace.snapshotTree(options.from, read);
    const to = await workspace.snapshotTree(undefined, read);
    const root = await resolveDestination(hostDir, allowed, dryRun);
    const target = { destination: new Destination(root), place: (path: string) => path };
    const plan = await planExport(from, to, [target], policy, call, protectRulesOf(workspace));
    return applyExport(plan, { dryRun, policy, call });
  });
}

/** Validated `dryRun` and `onConflict`, shared with `session.writeBack`. */
export function exportSettings(options: { dryRun?: unknown; onConflict?: unknown } | undefined): {
  dryRun: boolean;
  policy: ConflictPolicy;
} {
  const dryRun = options?.dryRun ?? false;
  const policy = options?.onConflict ?? 'fail';
  if (typeof dryRun !== 'boolean') throw new InvalidArgumentError('dryRun must be a boolean');
  if (policy !== 'fail' && policy !== 'skip' && policy !== 'overwrite')
    throw new InvalidArgumentError("onConflict must be 'fail', 'skip' or 'overwrite'");
  return { dryRun, policy };
}

/**
 * The real path of a destination directory inside the allowed roots. A missing one is checked through its
 * nearest existing ancestor and created (not in a dry run). Errors never name the host path.
 */
export async function resolveDestination(hostDir: string, allowed: AllowedRoots, dryRun: boolean): Promise<string> {
  let existing = isAbsolute(hostDir) ? hostDir : resolve(hostDir);
  const missing: string[] = [];
  for (;;) {
    try {
      existing = await fs.realpath(existing);
      break;
    } catch {
      if (dirname(existing) === existing) throw new PathEscapeError(undefined, 'the destination cannot be resolved');
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  const root = join(existing, ...missing);
  if (!allowed.contains(existing) || !allowed.contains(root))
    throw new PathEscapeError(undefined, 'the destination lies outside the allowed host roots');
  if (missing.length === 0) {
    if (!(await fs.stat(root)).isDirectory()) throw new NotADirectoryError('/', 'the destination is not a directory');
  } else if (!dryRun) {
    await fs.mkdir(root, { recursive: true });
    if ((await fs.realpath(root)) !== root) throw new PathEscapeError(undefined, 'the destination changed while it was created');
  }
  return root;
}

/** The empty tree: what `from` is for a whole-tree export. */
const EMPTY_TREE: SnapshotTree = snapshotTree(undefined, { child: async () => undefined, children: async () => [] });
