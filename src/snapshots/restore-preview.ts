import type { SnapshotEntry, SnapshotTree } from '../workspace/driver.js';
import type { RestorePreview, SkippedPath } from '../workspace/types.js';
import { changedPaths } from './snapshot-tree.js';

/**
 * What restoring `target` over `live` would do, changing nothing: the paths it would create, modify and
 * delete (files, links and directories), and those it would leave as they are, with `blockedBy`'s reason
 * (a protected path, a read-only mount). A path rewritten with the same kind, mode and bytes is no change.
 */
export async function previewRestore(
  live: SnapshotTree,
  target: SnapshotTree,
  blockedBy: (path: string, existsLive: boolean) => string | undefined,
): Promise<RestorePreview> {
  const preview: RestorePreview = { created: [], modified: [], deleted: [], blocked: [] };
  const blocked = new Map<string, SkippedPath>();
  for (const change of await changedPaths(live, target, { directories: true })) {
    if (change.status === 'modified' && (await sameEntry(await live.entry(change.path), await target.entry(change.path)))) continue;
    const reason = blockedBy(change.path, change.status !== 'added');
    if (reason !== undefined) {
      blocked.set(change.path, { path: change.path, reason });
      continue;
    }
    const list = change.status === 'added' ? preview.created : change.status === 'deleted' ? preview.deleted : preview.modified;
    if (list.at(-1) !== change.path) list.push(change.path);
  }
  preview.blocked = [...blocked.values()];
  // A directory holding a path left as it is stays too.
  const holdsBlocked = (path: string): boolean => preview.blocked.some((entry) => entry.path.startsWith(`${path}/`));
  if (preview.blocked.length > 0) preview.deleted = preview.deleted.filter((path) => !holdsBlocked(path));
  return preview;
}

async function sameEntry(a: SnapshotEntry | undefined, b: SnapshotEntry | undefined): Promise<boolean> {
  if (a === undefined || b === undefined || a.kind !== b.kind || a.kind === 'directory' || b.kind === 'directory') return false;
  if (a.kind === 'file' && b.kind === 'file' && a.executable !== b.executable) return false;
  return Buffer.from(await a.bytes()).equals(await b.bytes());
}
