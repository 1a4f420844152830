// The common case: make a workspace or a session, give a model its tools, catch typed errors. Everything else
// lives at a subpath (sessionfs/host, /store, /s3, /mcp, /governance, /export, /shell, /tools, /snapshots,
// /sources, /compose, /workspace, /testing, and one per adapter); test/ecosystem/package.test.ts lists the
// values here, so growing this list is a decision.
import './zod-version.js';
export {
  WorkspaceError,
  isWorkspaceError,
  AbortError,
  ConflictError,
  CorruptDataError,
  DirectoryNotEmptyError,
  FileExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  InvalidContentError,
  InvalidPathError,
  IsADirectoryError,
  LimitExceededError,
  NameTooLongError,
  NotADirectoryError,
  NotSupportedError,
  PathEscapeError,
  PolicyError,
  QuotaExceededError,
  ReadOnlyError,
  SnapshotError,
  SnapshotRestoreError,
  StoreUnavailableError,
  TimeoutError,
  type RestoreRetry,
  type WorkspaceErrorCode,
} from './workspace/errors.js';
export type * from './workspace/types.js';
export type * from './workspace/driver.js';
export type { LongCallOptions, Progress, ProgressListener } from './workspace/progress.js';
export type { WorkspaceLimits } from './workspace/limits.js';
export { createWorkspace, type CreateWorkspaceOptions, type ManagedWorkspace } from './workspace/create-workspace.js';
export type { AuditEvent, AuditSink, PolicyOperation, WatchEvent, WatchOptions, WorkspacePolicy } from './governance/index.js';
export { memoryDriver, type MemoryDriver } from './backends/memory/index.js';
export { hostDriver, type ChangeDetection, type HostDriver, type HostDriverOptions } from './backends/host/index.js';
export { overlayDriver, type OverlayDriver, type OverlayDriverOptions } from './backends/overlay/index.js';
export { composeDriver, type ComposeDriver, type ComposeDriverOptions, type MountAccess, type MountSpec } from './compose/index.js';
export { hydrate, type HostSource, type HydrateOptions, type HydrateProgress, type HydrateResult } from './sources/index.js';
export {
  createSession,
  defineTool,
  type CreateSessionOptions,
  type StoreSessionOptions,
  type StoreSeedOptions,
  type SessionNamespace,
  type RetentionOptions,
} from './session/index.js';
export type * from './session/types.js';
export type { ConflictRegion, MergeConflict, MergeConflictMode, MergeOptions, MergeResult, MergeSide } from './history/merge.js';
export type * from './history/types.js';
export { workspaceTools } from './shell/index.js';
export {
  workspacePrompt,
  type WorkspacePromptOptions,
  type WorkspaceTool,
  type WorkspaceToolName,
  type WorkspaceToolsOptions,
} from './tools/index.js';
export {
  WorkspaceNamespace,
  type DirectoryNamespace,
  type DirectoryNamespaceOptions,
  type StoreNamespace,
  type StoreNamespaceOptions,
  type WorkspaceNamespaceConstructor,
  type WorkspaceNamespaceOptions,
} from './namespaces/workspace-namespace.js';
export type { ExportOptions, ExportResult, WriteBackOptions } from './export/index.js';
export type { SessionStore } from './store/index.js';
