import { violation, type ProtectedRoot } from '../governance/protect.js';
import { trustOf } from '../governance/trust.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';

/**
 * After a host shell command: the `protect` rule for what real processes changed behind the protocol. A
 * protected root that existed before the command and is not the workspace's own is put back exactly as
 * `before` holds it, and the call fails with `PolicyError` (the session then rolls the rest back). A root
 * the command created (`git init`) becomes the workspace's own, as if a tool had made it.
 */
export async function refuseProtectedChanges(
  workspace: SnapshotableWorkspace,
  view: SnapshotableWorkspace,
  before: WorkspaceSnapshot,
  changed: readonly string[],
): Promise<void> {
  const trust = trustOf(workspace);
  if (trust === undefined || !trust.protection.active) return;
  const { protection } = trust;
  const touched = new Map<string, { found: ProtectedRoot; path: string }>();
  for (const path of changed) {
    const found = protection.rules.rootOf(path);
    if (found !== undefined && protection.leavesAlone(path) && !touched.has(found.root)) touched.set(found.root, { found, path });
  }
  if (touched.size === 0) return;
  const earlier = await view.snapshotTree(before);
  const violated: { found: ProtectedRoot; path: string }[] = [];
  for (const [root, change] of touched) {
    if ((await earlier.entry(root)) === undefined) protection.adopt(root);
    else violated.push(change);
  }
  const first = violated[0];
  if (first === undefined) return;
  await trust.restoreOnly(
    before,
    violated.map((change) => change.found.root),
  );
  throw violation(first.found, first.path);
}
