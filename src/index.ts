export * from './workspace/errors.js';
export { DEFAULT_LIMITS, type WorkspaceLimits } from './workspace/limits.js';
export { normalizePath } from './workspace/paths.js';
export type * from './workspace/types.js';
export { WorkspaceSnapshotSchema } from './snapshots/record.js';
export { MemoryWorkspace, type MemoryWorkspaceOptions } from './backends/memory/index.js';
export { HostWorkspace, type HostWorkspaceOptions, type ChangeDetection } from './backends/host/index.js';
export * from './tools/index.js';
