export * from './workspace/errors.js';
export { DEFAULT_LIMITS, type WorkspaceLimits } from './workspace/limits.js';
export { normalizePath } from './workspace/paths.js';
export type * from './workspace/types.js';
export type { LongCallOptions, Progress, ProgressListener } from './workspace/progress.js';
export { createWorkspace, DriverWorkspace, type CreateWorkspaceOptions } from './workspace/create-workspace.js';
export * from './governance/index.js';
export type * from './workspace/driver.js';
export { memoryBlobStore } from './snapshots/blob-store.js';
export { BlobSnapshotter } from './snapshots/blob-snapshotter.js';
export { WorkspaceSnapshotSchema } from './snapshots/record.js';
export { MemoryWorkspace, MemoryDriver, type MemoryWorkspaceOptions } from './backends/memory/index.js';
export { HostWorkspace, sweepStaleTemp, type HostWorkspaceOptions, type ChangeDetection, type SweepResult } from './backends/host/index.js';
export { OverlayWorkspace, type OverlayWorkspaceOptions } from './backends/overlay/index.js';
export * from './tools/index.js';
export {
  hydrate,
  HostMountSchema,
  type HostMount,
  type HydrateOptions,
  type HydrateProgress,
  type HydrateResult,
} from './sources/index.js';
export { createSession, defineTool, type CreateSessionOptions, type HydratedSession, type RetentionOptions } from './session/index.js';
export type * from './session/types.js';
export { createMcpServer, type McpServerOptions } from './cli/mcp-server.js';
export { userConfirmation } from './cli/mcp-review.js';
export * from './shell/index.js';
export {
  composeWorkspace,
  MOUNT_ACCESS_LEVELS,
  WorkspaceNamespace,
  DirectoryNamespace,
  NamespaceWorkspace,
  type ComposeWorkspaceOptions,
  type MountAccess,
  type MountSpec,
  type WorkspaceNamespaceConstructor,
  type WorkspaceNamespaceOptions,
} from './compose/index.js';
export * from './export/index.js';
export * from './store/index.js';
