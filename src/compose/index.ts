import { createWorkspace, type DriverWorkspace } from '../workspace/create-workspace.js';
import type { WorkspacePolicy } from '../governance/policy.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import type { WorkspaceLimits } from '../workspace/limits.js';
import { ComposeDriver } from './compose-driver.js';
import { MountTable, type MountSpec } from './mount-table.js';

export { MOUNT_ACCESS_LEVELS, type MountAccess, type MountSpec } from './mount-table.js';

export interface ComposeWorkspaceOptions {
  /** The mount table; routed by longest prefix. A path no mount holds is a read-only, empty part of the tree. */
  mounts: readonly MountSpec[];
  readOnly?: boolean;
  limits?: Partial<WorkspaceLimits>;
  /** What may be touched, judged on composed paths (see docs/governance.md). */
  policy?: WorkspacePolicy;
  /** What the host provided read-only (see `CreateWorkspaceOptions.protect`); default `.git`, `.hg`, `.svn`, `.jj`. */
  protect?: readonly string[];
}

/**
 * One workspace made of several: each mount shows a workspace (any backend) at a path with an access level.
 * The result is a full `SnapshotableWorkspace` (`backend: 'compose'`) built by `createWorkspace` on a
 * routing driver, so path rules, limits, locking, glob and grep are the same as every backend's. The
 * composition owns its mounts: `dispose()` disposes each mounted workspace once. See docs/composition.md.
 */
export function composeWorkspace(options: ComposeWorkspaceOptions): DriverWorkspace {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
  const table = new MountTable(options.mounts);
  return createWorkspace(new ComposeDriver(table), {
    ...(options.readOnly === undefined ? {} : { readOnly: options.readOnly }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.protect === undefined ? {} : { protect: options.protect }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
  });
}
export { DirectoryNamespace, NamespaceWorkspace, type WorkspaceNamespaceOptions } from './namespace.js';
export { WorkspaceNamespace, type WorkspaceNamespaceConstructor } from './workspace-namespace.js';
