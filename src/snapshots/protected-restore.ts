import type { BackendDriver, SnapshotEntry, Snapshotter } from '../workspace/driver.js';
import { copyBytes } from '../workspace/bytes.js';
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
  const live = await captureRoots(driver, [...roots]);
  const result = await snapshots.restore(record, options);
  await putBack(driver, snapshots, live);
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
  const tree = await snapshots.open(record);
  const wanted = new Map<NormalizedPath, SnapshotEntry[]>(roots.map((root) => [root, []]));
  for await (const entry of tree.entries()) {
    const root = roots.find((candidate) => isSameOrInside(entry.path, candidate));
    if (root !== undefined) wanted.get(root)?.push(entry);
  }
  await putBack(driver, snapshots, wanted);
}

/**
 * What the live state holds at and below each root, read through the driver before a restore changes it:
 * only the roots are walked, so the cost follows the protected content, not the tree, on every backend.
 */
async function captureRoots(driver: BackendDriver, roots: readonly NormalizedPath[]): Promise<Map<NormalizedPath, SnapshotEntry[]>> {
  const captured = new Map<NormalizedPath, SnapshotEntry[]>();
  for (const root of roots) {
    const entries: SnapshotEntry[] = [];
    const kind = await driver.kind(root).catch(() => undefined);
    const add = async (path: NormalizedPath, entryKind: string): Promise<void> => {
      if (entryKind === 'directory') entries.push({ path, kind: 'directory' });
      else if (entryKind === 'file') {
        const bytes = copyBytes((await driver.readFile(path, { offset: 0 })).content);
        entries.push({ path, kind: 'file', executable: await executableAt(driver, path), bytes: async () => bytes });
      } else if (entryKind === 'symlink' && driver.readlink !== undefined) {
        const target = new TextEncoder().encode(await driver.readlink(path));
        entries.push({ path, kind: 'symlink', bytes: async () => target });
      }
    };
    if (kind !== undefined) {
      await add(root, kind);
      if (kind === 'directory') for await (const entry of driver.walk(root)) await add(entry.path, entry.kind);
    }
    // Parents before what they hold, whatever order the driver walked in.
    captured.set(
      root,
      entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    );
  }
  return captured;
}

/** Makes each root in the live state hold exactly its entries (a root with none removed), when it differs. */
async function putBack(driver: BackendDriver, snapshots: Snapshotter, wanted: Map<NormalizedPath, SnapshotEntry[]>): Promise<void> {
  for (const [root, entries] of wanted) {
    if (await holds(driver, root, entries)) continue;
    if ((await driver.kind(root).catch(() => undefined)) !== undefined) await driver.remove(root, { recursive: true });
    for (const entry of entries) {
      if (entry.kind === 'directory') await driver.mkdir(entry.path);
      else if (entry.kind === 'file') {
        const executable = driver.setExecutable === undefined ? {} : { executable: entry.executable };
        await driver.writeFile(entry.path, await entry.bytes(), { mode: 'overwrite', ...executable });
      } else if (driver.symlink !== undefined) await driver.symlink(new TextDecoder().decode(await entry.bytes()), entry.path);
    }
    snapshots.changed?.([root]);
  }
}

/** Whether the live entries at and below `root` are exactly `entries` (same kinds, bytes, link targets and executable bits). */
async function holds(driver: BackendDriver, root: NormalizedPath, entries: readonly SnapshotEntry[]): Promise<boolean> {
  const kind = await driver.kind(root).catch(() => undefined);
  if (entries.length === 0 || kind === undefined) return entries.length === 0 && kind === undefined;
  const live = new Map<NormalizedPath, string>([[root, kind]]);
  if (kind === 'directory') for await (const entry of driver.walk(root)) live.set(entry.path, entry.kind);
  if (live.size !== entries.length) return false;
  for (const entry of entries) {
    if (live.get(entry.path) !== entry.kind) return false;
    if (entry.kind === 'directory') continue;
    if (entry.kind === 'file' && entry.executable !== (await executableAt(driver, entry.path))) return false;
    if (entry.kind === 'symlink' && driver.readlink === undefined) return false;
    const have =
      entry.kind === 'file'
        ? (await driver.readFile(entry.path, { offset: 0 })).content
        : new TextEncoder().encode(await (driver.readlink as (path: string) => Promise<string>)(entry.path));
    if (Buffer.compare(Buffer.from(await entry.bytes()), Buffer.from(have)) !== 0) return false;
  }
  return true;
}

/** A file's executable bit; only a driver that can set it has one. */
async function executableAt(driver: BackendDriver, path: NormalizedPath): Promise<boolean> {
  return driver.setExecutable !== undefined && (await driver.stat(path)).executable === true;
}
