import './zod-version.js';
export * from './workspace/errors.js';
export { DEFAULT_LIMITS, type WorkspaceLimits } from './workspace/limits.js';
export { normalizePath } from './workspace/paths.js';
export type * from './workspace/types.js';
export type { LongCallOptions, Progress, ProgressListener } from './workspace/progress.js';
export { createWorkspace, type CreateWorkspaceOptions, type ManagedWorkspace } from './workspace/create-workspace.js';
export * from './governance/index.js';
export type * from './workspace/driver.js';
export { memoryBlobStore } from './snapshots/blob-store.js';
export { BlobSnapshotter } from './snapshots/blob-snapshotter.js';
export { WorkspaceSnapshotSchema } from './snapshots/record.js';
export { memoryDriver, type MemoryDriver } from './backends/memory/index.js';
export {
  hostDriver,
  hostExec,
  sweepStaleTemp,
  type HostDriver,
  type HostDriverOptions,
  type ChangeDetection,
  type SweepResult,
} from './backends/host/index.js';
export { overlayDriver, type OverlayDriver, type OverlayDriverOptions } from './backends/overlay/index.js';
export * from './tools/index.js';
export {
  hydrate,
  HostMountSchema,
  type HostMount,
  type HydrateOptions,
  type HydrateProgress,
  type HydrateResult,
} from './sources/index.js';
export {
  createSession,
  defineTool,
  type CreateSessionOptions,
  type StoreSessionOptions,
  type SessionNamespace,
  type RetentionOptions,
} from './session/index.js';
export type * from './session/types.js';
export { createMcpServer, type McpServerOptions } from './cli/mcp-server.js';
export * from './shell/index.js';
export {
  composeDriver,
  MOUNT_ACCESS_LEVELS,
  type ComposeDriver,
  type ComposeDriverOptions,
  type MountAccess,
  type MountSpec,
} from './compose/index.js';
export {
  WorkspaceNamespace,
  type DirectoryNamespace,
  type DirectoryNamespaceOptions,
  type StoreNamespace,
  type StoreNamespaceOptions,
  type WorkspaceNamespaceConstructor,
  type WorkspaceNamespaceOptions,
} from './namespaces/workspace-namespace.js';
export * from './export/index.js';
export * from './store/index.js';
