import { NotSupportedError } from '../workspace/errors.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';

/**
 * Forks any workspace: `workspace.fork()` where it has one (every workspace `createWorkspace` builds has,
 * refusing with `NotSupportedError` when its driver cannot fork), else `NotSupportedError` (`ENOTSUP`) for
 * a workspace of another make. Nothing is created on a refusal.
 */
export async function forkWorkspace(workspace: SnapshotableWorkspace): Promise<SnapshotableWorkspace> {
  const fork = (workspace as { fork?: () => SnapshotableWorkspace | Promise<SnapshotableWorkspace> }).fork;
  if (typeof fork !== 'function') throw new NotSupportedError(`the ${workspace.backend} backend cannot fork a workspace`);
  return fork.call(workspace);
}
