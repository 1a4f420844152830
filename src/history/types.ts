import type { DiffEntry } from '../workspace/types.js';

/** Who asked for an operation: the model (its tool calls), the orchestrator's code, or a person (an inspector, a CLI). */
export type HistoryActor = 'model' | 'orchestrator' | 'user';

export const HISTORY_ACTORS: readonly HistoryActor[] = ['model', 'orchestrator', 'user'];

/**
 * What an operation was: a tool `call` (through `runTool`), a `change` made through `session.filesystem`
 * outside any call, a `restore` (`rollbackTo`, a fork's starting point), an `undo` or `redo`, a `merge`.
 */
export type OperationKind = 'call' | 'change' | 'restore' | 'undo' | 'redo' | 'merge';

/** One operation of a session's history. JSON: no host path, no file content. */
export interface HistoryOperation {
  /** `op-1`, `op-2`, … in the order they happened. */
  id: string;
  turnId: string;
  actor: HistoryActor;
  kind: OperationKind;
  /** The tool's name for a call; the method or action otherwise (`write`, `rollbackTo`, `undo`, …). */
  tool: string;
  /** Its arguments in short: paths and sizes, never file contents. */
  summary: string;
  /** What it changed, as `diff` reports it (files and links, sorted). Empty for a read or a rolled-back call. */
  changed: DiffEntry[];
  /** The workspace before and after it, as snapshot ids (`session.fork({ at })`, `blame` and `undo` use them). */
  before?: string;
  after?: string;
  startedAt: string;
  finishedAt: string;
  /** `failed`: the call failed and was rolled back (or could not be). */
  outcome: 'ok' | 'failed';
  /** A failed call's code. */
  code?: string;
  /** A call's id: its audit events carry it as `actor.callId`, and so does its `session.calls` record. */
  callId?: string;
  /** `undo`/`redo`: the turn it undid or redid. */
  target?: string;
  /** The audit events it caused, oldest first (a stored session's operations; at most 200, see `auditOmitted`). */
  audit?: AuditEventSummary[];
  /** Its audit events beyond those kept in `audit`. */
  auditOmitted?: number;
}

/** One audit event of an operation, as its history keeps it: what and how, never contents nor a host path. */
export interface AuditEventSummary {
  /** The protocol method (`write`, `rename`, `restore`, …). */
  op: string;
  /** The path as the caller gave it (a workspace path). */
  path?: string;
  /** The second path of a rename or copy. */
  to?: string;
  outcome: 'ok' | 'failed';
  /** A failed event's code (`ENOENT`, `ABORT_ERR`, …). */
  code?: string;
  /** Bytes written or returned. */
  bytes?: number;
  durationMs: number;
}

/** A turn: what one model response (or a `session.turn()` of the orchestrator's) did. */
export interface HistoryTurn {
  /** `turn-1`, `turn-2`, … */
  id: string;
  label?: string;
  /** `turn`: opened by `session.turn()` or by an operation outside any open turn; `undo`/`redo`: holds one such operation. */
  kind: 'turn' | 'undo' | 'redo';
  startedAt: string;
  /** Undone by `undo()` and not redone since; its snapshots stay reachable until retention drops them. */
  undone: boolean;
  operations: HistoryOperation[];
}

/** What `session.history()` returns: JSON-serialisable, oldest first. */
export interface SessionHistory {
  sessionId: string;
  turns: HistoryTurn[];
  /** Whether `undo()` / `redo()` have something to do. */
  canUndo: boolean;
  canRedo: boolean;
  /** Operations retention dropped (the oldest); what they changed is attributed to no operation by `blame`. */
  dropped: number;
}

/** One line of `blame`: the operation that last changed it (none when it predates the history kept). */
export interface BlameLine {
  /** 1-based. */
  line: number;
  /** The line without its `\n` (a `\r` before it kept). */
  text: string;
  operationId?: string;
  turnId?: string;
  actor?: HistoryActor;
  tool?: string;
}

export interface BlameResult {
  path: string;
  lines: BlameLine[];
}

/** Options of `undo`, `redo` and `turn`: who asks (default `orchestrator`). */
export interface HistoryActionOptions {
  actor?: HistoryActor;
}
