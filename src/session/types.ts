import type { z } from 'zod';
import type { WorkspaceErrorCode } from '../workspace/errors.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import type { ExportResult } from '../export/export-plan.js';
import type { WriteBackOptions } from '../export/write-back.js';
import type { HydrateResult } from '../sources/schema.js';
import type { MergeOptions, MergeResult } from '../history/merge.js';
import type { ExecOptions, ExecResult } from '../programs/types.js';
import type { BlameResult, HistoryActionOptions, HistoryActor, HistoryOperation, SessionHistory } from '../history/types.js';

/** A file a session sent to its user (the `send_file` tool), as `session.outputs` lists it. */
export interface SessionOutput {
  /** `output-1`, `output-2`, … in the order sent; what `session.readOutput` takes. */
  id: string;
  /** The workspace path it was sent from. */
  path: string;
  sizeBytes: number;
  mimeType: string;
  description?: string;
  /** The workspace as it was when the file was sent (its content there is what was sent). */
  snapshot: WorkspaceSnapshot;
  /** ISO time it was sent. */
  sentAt: string;
}

/** What a tool handler returns. `success: false` makes `runTool` roll the call back. */
export interface ToolResult<T = unknown> {
  success: boolean;
  /** Human- and model-readable; never contains a host path. */
  message: string;
  value?: T;
}

/** What a tool handler receives besides its parameters. Handlers touch files through `filesystem` only. */
export interface ToolContext {
  filesystem: SnapshotableWorkspace;
  session: Session;
  signal?: AbortSignal;
}

/**
 * What a tool does to its environment, as MCP's tool annotations say it (hints for clients, which may, for
 * example, skip confirmation for a read-only tool). `runTool` takes no snapshot before a `readOnlyHint` tool.
 */
export interface ToolAnnotations {
  /** Changes nothing. */
  readOnlyHint?: boolean;
  /** May overwrite or delete what exists (meaningful when not read-only). */
  destructiveHint?: boolean;
  /** Calling it again with the same arguments has no further effect (meaningful when not read-only). */
  idempotentHint?: boolean;
  /** Reaches beyond the workspace (the network, real programs). */
  openWorldHint?: boolean;
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType, T = unknown> {
  name: string;
  description: string;
  parameters: Schema;
  annotations?: ToolAnnotations;
  handler(params: z.output<Schema>, context: ToolContext): Promise<ToolResult<T>> | ToolResult<T>;
}

/** A defined tool: the definition plus the JSON Schema of its parameters (zod's own converter). */
export interface Tool<Schema extends z.ZodType = z.ZodType, T = unknown> extends ToolDefinition<Schema, T> {
  jsonSchema: Record<string, unknown>;
  /**
   * The same parameters in OpenAI strict mode: every property required, optional ones nullable (`null` means
   * absent), `additionalProperties: false`, no keywords strict mode refuses.
   */
  strictJsonSchema: Record<string, unknown>;
}

/** What `session.runTool` returns: the handler's result plus what the session did about it. */
export interface ToolCallResult<T = unknown> extends ToolResult<T> {
  /** True when the workspace was restored to the snapshot taken before the call. */
  rolledBack: boolean;
  /** The `WorkspaceError` code when the call failed with one (`EINVAL` for invalid parameters, `ABORT_ERR` for an abort). */
  code?: WorkspaceErrorCode | 'ETOOL';
}

/** One call of `session.calls`. */
export interface ToolCallRecord {
  tool: string;
  /** Unique per call; audit events of the call's operations carry it as `actor.callId`. */
  callId: string;
  params: unknown;
  /** The snapshot taken before the call (absent on a read-only session or when parameters were invalid). */
  snapshot?: WorkspaceSnapshot;
  result: ToolCallResult;
  startedAt: string;
  finishedAt: string;
}

export interface RunToolOptions {
  signal?: AbortSignal;
  /** Who made the call, as `session.history()` records it. Default `model`. */
  actor?: HistoryActor;
}

/** `session.fork({ at })`: the snapshot (a record of this session's, or its id) the fork starts from. Default: now. */
export interface ForkOptions {
  at?: WorkspaceSnapshot | string;
}

export interface Session extends AsyncDisposable {
  readonly id: string;
  /** The current workspace; a new object after `reset()`. */
  readonly filesystem: SnapshotableWorkspace;
  /** Snapshots taken before each call, oldest first (what `rollbackTo` accepts). */
  readonly snapshots: readonly WorkspaceSnapshot[];
  /** Every call: tool, parameters, the snapshot before, outcome (newest `retention.maxHistory`). */
  readonly calls: readonly ToolCallRecord[];
  /** The files sent to the user with `send_file`, oldest first (kept across `reset()`). */
  readonly outputs: readonly SessionOutput[];
  /** The bytes of an output as they were when sent; an unknown id is `InvalidArgumentError` (`EINVAL`). */
  readOutput(id: string): Uint8Array;
  runTool<Schema extends z.ZodType, T>(
    tool: ToolDefinition<Schema, T>,
    rawParams: unknown,
    options?: RunToolOptions,
  ): Promise<ToolCallResult<T>>;
  /**
   * Runs a real program on the workspace in a sandbox (docs/programs.md): `command` is a string run by
   * `bash -c`, or an argv. The program sees the workspace at `/workspace`; what it changes is applied
   * through the protocol as one change when it ends (a non-zero exit status is a result, not an error). A
   * deadline, an abort or a limit applies nothing and rejects; a change the workspace refuses (policy,
   * quota, protected path, read-only) rejects with that error and leaves the workspace as it was. Inside a
   * tool call of this session the changes belong to that call (its rollback undoes them).
   * `NotSupportedError` (`ENOTSUP`) where no sandbox can run.
   */
  exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /** Restores `snapshot` (undoing every call after it); recorded in the history as a `restore` operation. */
  rollbackTo(snapshot: WorkspaceSnapshot): Promise<void>;
  /**
   * Opens a turn: the operations after it (calls, changes, restores) belong to it until the next turn, undo
   * or redo. Adapters open one per model response. Returns its id. See docs/history.md.
   */
  turn(label?: string): Promise<string>;
  /** The operations so far, in turns (JSON). See docs/history.md. */
  history(): Promise<SessionHistory>;
  /** Restores the state before the last turn that changed something and is not undone; `NothingToUndoError` when none. */
  undo(options?: HistoryActionOptions): Promise<HistoryOperation>;
  /** Re-applies the turn the latest undo undid; `NothingToRedoError` when nothing is undone (or a change came since). */
  redo(options?: HistoryActionOptions): Promise<HistoryOperation>;
  /** For each line of a text file, the operation that last changed it. */
  blame(path: string): Promise<BlameResult>;
  /** A fresh workspace with the sources hydrated again; history and snapshots start over. */
  reset(): Promise<void>;
  dispose(): Promise<void>;
}

/** What `session.merge` merges from: a session, or a workspace. */
export type MergeSource = Session | SnapshotableWorkspace;

/** A `Session` as `createSession` returns it: also tells what the last hydration copied and skipped. */
export interface HydratedSession extends Session {
  /** The last hydration's result (creation or `reset()`); `undefined` without sources. */
  readonly hydration: HydrateResult | undefined;
  /** Writes the changes since hydration back to the sources' host paths; see docs/export.md. */
  writeBack(options?: WriteBackOptions): Promise<ExportResult>;
  /**
   * A new session (new id) on a fork of this session's workspace: the same content, snapshots, history,
   * outputs and hydration baseline, independent afterwards. `NotSupportedError` (`ENOTSUP`) when the
   * backend cannot fork (overlay, composition). `at`: start from that snapshot of this session's instead
   * (recorded as the fork's first operation); another session's is `SnapshotRestoreError`. See docs/export.md.
   */
  fork(options?: ForkOptions): Promise<HydratedSession>;
  /**
   * Merges what `other` (a session or a workspace) changed since `base` (default: the fork point between
   * the two) into this session, three-way and line-wise, as one call: clean changes are applied together
   * or not at all; conflicts come back as data and change nothing unless `conflicts: 'markers'`. A refused
   * write throws its error, with nothing changed. See docs/merge.md.
   */
  merge(other: MergeSource, options?: MergeOptions): Promise<MergeResult>;
}

/** A session whose head lives in a `SessionStore` (`createSession({ store, sessionId })`): resumable on any machine, one writer at a time. */
export interface RemoteSession extends HydratedSession {
  /** The session this one was forked from. */
  readonly parentId: string | undefined;
  /** The head version this session last published or opened. */
  readonly version: number;
  /**
   * Stores what changed and moves the head by compare-and-swap on its version. `ConflictError`, with
   * nothing moved, when this owner lost its lease to another (the version fences it off). Called after
   * every successful `runTool` and by `dispose()`.
   */
  publish(): Promise<number>;
}
