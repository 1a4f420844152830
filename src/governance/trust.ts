import type { NormalizedPath } from '../workspace/paths.js';
import type { WorkspaceSnapshot } from '../workspace/types.js';
import type { AccessIntent } from './governance.js';
import type { Protection } from './protect.js';

/**
 * What the library's own orchestrating code (hydration, the host shell) may ask of a workspace built by
 * `createWorkspace`, and a tool never can: it is reached through this module, not through the workspace.
 */
export interface WorkspaceTrust {
  readonly protection: Protection;
  /** Whether the workspace's policy admits `path` (what hydration skips instead of failing on). */
  admits(path: NormalizedPath, intent: AccessIntent): Promise<boolean>;
  /** Puts only `roots` back as `snapshot` holds them (a host shell call changed protected content). */
  restoreOnly(snapshot: WorkspaceSnapshot, roots: readonly NormalizedPath[]): Promise<void>;
}

const trusts = new WeakMap<object, WorkspaceTrust>();

export function registerTrust(workspace: object, trust: WorkspaceTrust): void {
  trusts.set(workspace, trust);
}

/** The trust handle of a workspace built by `createWorkspace`; undefined for any other. */
export function trustOf(workspace: object): WorkspaceTrust | undefined {
  return trusts.get(workspace);
}
