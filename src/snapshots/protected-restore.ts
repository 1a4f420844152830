import type { BackendDriver, SnapshotEntry, Snapshotter, SnapshotTree } from '../workspace/driver.js';
import { PolicyError } from '../workspace/errors.js';
import { isSameOrInside, type NormalizedPath } from '../workspace/paths.js';
import type { LongCallOptions } from '../workspace/progress.js';
import type { RestoreResult, SkippedPath, WorkspaceSnapshot } from '../workspace/types.js';

/** Which paths a restore leaves as they are, and why (the `protect` rule: see src/governance/protect.ts). */
export interface LeftAlone {
  leavesAlone(path: NormalizedPath, exists?: boolean): boolean;
  /** The protected root a left-alone path lies in. */
  rootOf(path: NormalizedPath): NormalizedPath;
  reason(path: NormalizedPath): string;
}

/**
 * A restore that leaves some paths exactly as they are. A snapshotter that can do it itself
 * (`restoreExcept`: the host's never touches them) does; for the others, the protected roots that differ
 * between the live state and the snapshot are read from the live tree before the restore and put back
 * after it (through the driver, comparing first, so a root that is already right is not written).
 */
export async function restoreLeaving(
  snapshots: Snapshotter,
  driver: BackendDriver,
  record: WorkspaceSnapshot,
  left: LeftAlone,
  options: LongCallOptions,
): Promise<RestoreResult> {
  if (snapshots.restoreExcept !== undefined) return snapshots.restoreExcept(record, left.leavesAlone, options);
  const roots = new Set<NormalizedPath>();
  for (const entry of await snapshots.diff(record, undefined, options)) {
    const root = left.rootOf(entry.path);
    if (roots.has(root) || !left.leavesAlone(entry.path)) continue;
    if (left.leavesAlone(root, (await driver.kind(root).catch(() => undefined)) !== undefined)) roots.add(root);
  }
  if (roots.size === 0) return snapshots.restore(record, options);
  if (snapshots.open === undefined)
    throw new PolicyError(
      `the snapshot would rewrite protected paths (${[...roots].join(', ')}) and this backend cannot restore around them`,
    );
  const live = await snapshots.open(undefined, options);
  const result = await snapshots.restore(record, options);
  await putBack(driver, snapshots, live, [...roots]);
  const skipped: SkippedPath[] = [...roots].sort().map((root) => ({ path: root, reason: left.reason(root) }));
  return { ...result, skipped: [...result.skipped, ...skipped] };
}

/**
 * Makes only `roots` hold what `record` holds there, everything else left as it is: how a host shell call
 * that changed protected content puts the host's own files back.
 */
export async function restoreOnly(
  snapshots: Snapshotter,
  driver: BackendDriver,
  record: WorkspaceSnapshot,
  roots: readonly NormalizedPath[],
): Promise<void> {
  if (roots.length === 0) return;
  if (snapshots.restoreExcept !== undefined) {
    const unrelated = (path: NormalizedPath) => !roots.some((root) => isSameOrInside(path, root) || isSameOrInside(root, path));
    await snapshots.restoreExcept(record, unrelated, {});
    return;
  }
  if (snapshots.open === undefined) throw new PolicyError('this backend cannot put protected paths back from a snapshot');
  await putBack(driver, snapshots, await snapshots.open(record), roots);
}

/** Makes each root in the live state what it is in `tree` (a missing one removed), when it differs. */
async function putBack(driver: BackendDriver, snapshots: Snapshotter, tree: SnapshotTree, roots: readonly NormalizedPath[]): Promise<void> {
  const wanted = new Map<NormalizedPath, SnapshotEntry[]>(roots.map((root) => [root, []]));
  for await (const entry of tree.entries()) {
    const root = roots.find((candidate) => isSameOrInside(entry.path, candidate));
    if (root !== undefined) wanted.get(root)?.push(entry);
  }
  for (const [root, entries] of wanted) {
    if (await holds(driver, root, entries)) continue;
    if ((await driver.kind(root).catch(() => undefined)) !== undefined) await driver.remove(root, { recursive: true });
    for (const entry of entries) {
      if (entry.kind === 'directory') await driver.mkdir(entry.path);
      else if (entry.kind === 'file') await driver.writeFile(entry.path, await entry.bytes(), { mode: 'overwrite' });
      // A link cannot be made through the driver primitives; the snapshotters without `restoreExcept` hold none.
    }
    snapshots.changed?.([root]);
  }
}

/** Whether the live entries at and below `root` are exactly `entries` (same kinds, same bytes). */
async function holds(driver: BackendDriver, root: NormalizedPath, entries: readonly SnapshotEntry[]): Promise<boolean> {
  const kind = await driver.kind(root).catch(() => undefined);
  if (entries.length === 0 || kind === undefined) return entries.length === 0 && kind === undefined;
  const live = new Map<NormalizedPath, string>([[root, kind]]);
  if (kind === 'directory') for await (const entry of driver.walk(root)) live.set(entry.path, entry.kind);
  if (live.size !== entries.length) return false;
  for (const entry of entries) {
    if (live.get(entry.path) !== entry.kind) return false;
    if (entry.kind !== 'file') continue;
    const [want, have] = await Promise.all([entry.bytes(), driver.readFile(entry.path, { offset: 0 })]);
    if (Buffer.compare(Buffer.from(want), Buffer.from(have.content)) !== 0) return false;
  }
  return true;
}
