import type { AuditSink } from '../governance/audit.js';
import type { WorkspacePolicy } from '../governance/policy.js';
import type { BlobStore } from './driver.js';
import type { WorkspaceLimits } from './limits.js';

/** How a workspace built on a driver is governed: see {@link createWorkspace}. */
export interface CreateWorkspaceOptions {
  readOnly?: boolean;
  limits?: Partial<WorkspaceLimits>;
  /** Where the default snapshotter keeps file contents and manifests (unused when the driver has `snapshots`). Default: memory. */
  blobs?: BlobStore;
  /** What may be touched, how much, and what needs confirming: see docs/governance.md. Checked before any change. */
  policy?: WorkspacePolicy;
  audit?: AuditSink[]; // every operation, its actor, outcome and duration (never contents): docs/governance.md
  /**
   * Picomatch globs of what the host provides read-only (the directory a pattern matches and all below it):
   * every mutation there is `PolicyError` (`EPERM`), and restores leave it as it is. Default
   * `DEFAULT_PROTECT` (`.git`, `.hg`, `.svn`, `.jj` anywhere); `[]` turns it off. What the workspace itself
   * creates there stays ordinary content. See docs/security-model.md.
   */
  protect?: readonly string[];
}
