import { NotSupportedError } from '../workspace/errors.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';

/** A workspace whose backend can fork it: `MemoryWorkspace` (synchronous, O(1)) and `HostWorkspace`. */
export interface ForkableWorkspace extends SnapshotableWorkspace {
  fork(): SnapshotableWorkspace | Promise<SnapshotableWorkspace>;
}

export function canFork(workspace: SnapshotableWorkspace): workspace is ForkableWorkspace {
  return typeof (workspace as Partial<ForkableWorkspace>).fork === 'function';
}

/**
 * Forks any workspace whose backend has `fork()`: an independent workspace with the same content and the
 * history before the fork. A backend without it (an overlay, a composition, a third-party driver) is
 * `NotSupportedError` (`ENOTSUP`), and nothing is created.
 */
export async function forkWorkspace(workspace: SnapshotableWorkspace): Promise<SnapshotableWorkspace> {
  if (!canFork(workspace)) throw new NotSupportedError(`the ${workspace.backend} backend cannot fork a workspace`);
  return workspace.fork();
}
