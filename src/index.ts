export * from './workspace/errors.js';
export { DEFAULT_LIMITS, type WorkspaceLimits } from './workspace/limits.js';
export { normalizePath } from './workspace/paths.js';
export type * from './workspace/types.js';
export { BaseWorkspace, type BaseWorkspaceOptions, type EntryKind, type WalkEntry, type WriteFileRequest } from './workspace/base.js';
export { WorkspaceSnapshotSchema } from './snapshots/record.js';
export { MemoryWorkspace, type MemoryWorkspaceOptions } from './backends/memory/index.js';
export { HostWorkspace, type HostWorkspaceOptions, type ChangeDetection } from './backends/host/index.js';
export * from './tools/index.js';
export {
  hydrate,
  HostMountSchema,
  type HostMount,
  type HydrateOptions,
  type HydrateProgress,
  type HydrateResult,
} from './host-mounts/index.js';
export { createSession, defineTool, type CreateSessionOptions, type HydratedSession } from './session/index.js';
export type * from './session/types.js';
export { createMcpServer, type McpServerOptions } from './cli/mcp-server.js';
