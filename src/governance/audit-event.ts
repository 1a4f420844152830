/** Who caused an operation: a tool call (its tool name and call id) or the code driving the session. */
export type AuditActor = { kind: 'tool'; tool: string; callId: string } | { kind: 'orchestrator' };

/**
 * One audited operation. Never carries file contents: only paths, byte counts, the outcome and timing.
 * `outcome` is `'ok'`, or the failure's `WorkspaceError` code (`'ABORT_ERR'` for an abort, `'ERROR'` for an
 * error that is not a `WorkspaceError`, a tool call's own failure code for `op: 'toolCall'`).
 */
export interface AuditEvent {
  /** ISO 8601, when the operation started. */
  at: string;
  /** The session the workspace serves, when it serves one. */
  sessionId?: string;
  actor: AuditActor;
  /** The protocol method (`write`, `rename`, `snapshot`, `restore`, …), or `toolCall` for a whole tool call. */
  op: string;
  /** The path as the caller gave it (a tool call's: none). */
  path?: string;
  /** The second path of a rename or copy. */
  to?: string;
  /** Bytes written (write, writeBytes) or returned (readBytes). */
  bytes?: number;
  outcome: 'ok' | string;
  durationMs: number;
}

/** Where audit events go: any function of an event (its result is awaited only to catch a rejection). */
export type AuditSink = (event: AuditEvent) => void | Promise<void>;

/** The orchestrator as an actor: one frozen object, so a sink can recognise it by identity. */
export const ORCHESTRATOR: AuditActor = Object.freeze({ kind: 'orchestrator' });

/**
 * What an event says besides its path, times and byte count: who, what and how it ended. The audit keeps
 * one per method and actor for the operations that succeed (most of them), so that recording one costs no
 * new object.
 */
export class AuditMeta {
  /** Its part of a JSONL line, encoded once (see `JsonLines`): what comes after `at`, and before `durationMs`'s value. */
  lines: [head: Uint8Array, tail: Uint8Array] | undefined;

  constructor(
    readonly sessionId: string | undefined,
    readonly actor: AuditActor,
    readonly op: string,
    readonly outcome: string,
    readonly to: string | undefined,
  ) {}
}

/**
 * What the built-in sinks keep of an event the audit recorded itself: its fields as they are, `at` as a
 * number (milliseconds since the epoch), so that recording an operation builds no object and no string;
 * the `AuditEvent` (and its ISO `at`) is made only when someone reads it (`memoryAuditSink().events`) or
 * writes it out (the JSONL sink's batch).
 */
export type RecordFields = (at: number, meta: AuditMeta, path: string | undefined, bytes: number | undefined, durationMs: number) => void;

/** How a built-in sink takes an event's fields without the event object (see {@link RecordFields}). */
export const RECORD: unique symbol = Symbol('sessionfs.auditRecord');

/** A sink that can also take the fields of an event: the audit uses that instead of calling it with an event. */
export type RecordingSink = AuditSink & { readonly [RECORD]?: RecordFields };

/** Gives a sink its fields entry point (not enumerable: the sink stays a plain function of an event). */
export function recording<S extends AuditSink>(sink: S, record: RecordFields): S {
  return Object.defineProperty(sink, RECORD, { value: record });
}
