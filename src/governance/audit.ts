import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { InvalidArgumentError, isWorkspaceError } from '../workspace/errors.js';

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

/** A sink that keeps the latest `max` events in `events`, oldest first. */
export interface MemoryAuditSink extends AuditSink {
  readonly events: AuditEvent[];
}

/** Keeps the latest `max` (default 10 000) events in memory: for tests, dashboards, a session's own review. */
export function memoryAuditSink(options: { max?: number } = {}): MemoryAuditSink {
  const max = options.max ?? 10_000;
  if (!Number.isSafeInteger(max) || max < 1)
    throw new InvalidArgumentError(`memoryAuditSink max must be a positive whole number, got ${String(max)}`);
  const events: AuditEvent[] = [];
  const sink = (event: AuditEvent): void => {
    events.push(event);
    // Trim in batches so a full buffer costs O(1) per event on average, not a shift per event.
    if (events.length >= max * 2 || (events.length > max && events.length - max >= 1024)) events.splice(0, events.length - max);
  };
  return Object.defineProperty(sink, 'events', {
    get: () => {
      if (events.length > max) events.splice(0, events.length - max);
      return events;
    },
  }) as MemoryAuditSink;
}

/** The actor and session of the code running now, set by the session around each tool call. */
export const auditScope = new AsyncLocalStorage<{ sessionId: string; actor: AuditActor }>();

/** The orchestrator as an actor: one frozen object, so a sink can recognise it by identity. */
export const ORCHESTRATOR: AuditActor = Object.freeze({ kind: 'orchestrator' });

/** What an operation tells the log besides its name and outcome. */
export interface AuditDetail {
  path?: unknown;
  to?: unknown;
}

/**
 * A workspace's audit log: hands each event to every sink. A sink that throws or rejects never breaks the
 * operation: its first failure is reported once as a process warning (`SESSIONFS_AUDIT_SINK`), later
 * ones are dropped silently.
 */
export class AuditLog {
  readonly #sinks: AuditSink[];
  readonly #failed = new Set<AuditSink>();
  /** The session this workspace serves, when its operations run outside a tool call. */
  sessionId: string | undefined;

  constructor(sinks: unknown) {
    if (sinks === undefined) this.#sinks = [];
    else if (!Array.isArray(sinks) || !sinks.every((sink) => typeof sink === 'function'))
      throw new InvalidArgumentError('audit must be an array of sinks (functions of an event, e.g. memoryAuditSink())');
    else this.#sinks = [...(sinks as AuditSink[])];
  }

  get active(): boolean {
    return this.#sinks.length > 0;
  }

  /**
   * Runs `task` on `args` (with `self` as `this`) and records it: start time, actor, outcome and duration.
   * The event is built when the task ends, from the arguments (`detail`) and, for byte counts, its result
   * (`bytes`).
   */
  record<T>(
    op: string,
    args: unknown[],
    detail: (args: unknown[]) => AuditDetail,
    bytes: ((args: unknown[], result: T | undefined) => number | undefined) | undefined,
    task: (...args: unknown[]) => Promise<T>,
    self?: unknown,
  ): Promise<T> {
    const started = performance.now();
    const at = isoNow();
    const { sessionId, actor } = this.context();
    let running: Promise<T>;
    try {
      running = task.apply(self, args);
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.then(
      (result) => {
        this.emit(auditEvent(at, sessionId, actor, op, detail(args), bytes?.(args, result), 'ok', started));
        return result;
      },
      (error: unknown) => {
        this.emit(auditEvent(at, sessionId, actor, op, detail(args), bytes?.(args, undefined), outcomeOf(error), started));
        throw error;
      },
    );
  }

  /** Hands a finished event to every sink. */
  emit(event: AuditEvent): void {
    for (const sink of this.#sinks) {
      try {
        const result = sink(event);
        if (result !== undefined && typeof (result as Promise<void>).then === 'function')
          (result as Promise<void>).then(undefined, (error: unknown) => this.#sinkFailed(sink, error));
      } catch (error) {
        this.#sinkFailed(sink, error);
      }
    }
  }

  /** The actor and session of the code running now. */
  context(): { sessionId: string | undefined; actor: AuditActor } {
    const scope = auditScope.getStore();
    return scope === undefined ? { sessionId: this.sessionId, actor: ORCHESTRATOR } : scope;
  }

  #sinkFailed(sink: AuditSink, error: unknown): void {
    if (this.#failed.has(sink)) return;
    this.#failed.add(sink);
    const reason = error instanceof Error ? error.message : String(error);
    process.emitWarning(`an audit sink failed; its events are being lost (reported once per sink): ${reason}`, {
      code: 'SESSIONFS_AUDIT_SINK',
    });
  }
}

/** One event, its optional fields set only when present (a sink sees no `undefined` members). */
function auditEvent(
  at: string,
  sessionId: string | undefined,
  actor: AuditActor,
  op: string,
  detail: AuditDetail,
  bytes: number | undefined,
  outcome: string,
  started: number,
): AuditEvent {
  // Microseconds are all a log needs: a rounded number is shorter to write and to read.
  const event: AuditEvent = { at, actor, op, outcome, durationMs: Math.round((performance.now() - started) * 1000) / 1000 };
  if (sessionId !== undefined) event.sessionId = sessionId;
  if (typeof detail.path === 'string') event.path = detail.path;
  if (typeof detail.to === 'string') event.to = detail.to;
  if (bytes !== undefined) event.bytes = bytes;
  return event;
}

let isoMs = NaN;
let isoText = '';

/** `new Date().toISOString()`, formatted once per millisecond: thousands of operations share one. */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

/** An operation's outcome as the audit records it. */
export function outcomeOf(error: unknown): string {
  if (isWorkspaceError(error)) return error.code;
  if (error instanceof Error && error.name === 'AbortError') return 'ABORT_ERR';
  return 'ERROR';
}

const logs = new WeakMap<object, AuditLog>();

/** Registers a workspace's log, so that a session can record its tool calls there. */
export function registerAuditLog(workspace: object, log: AuditLog): void {
  if (log.active) logs.set(workspace, log);
}

/** The audit log of a workspace, when it has sinks. */
export function auditLogOf(workspace: object): AuditLog | undefined {
  return logs.get(workspace);
}

/** Names the session a workspace serves in its audit events (the first session to claim it keeps it). */
export function claimAuditLog(workspace: object, sessionId: string): void {
  const log = logs.get(workspace);
  if (log !== undefined && log.sessionId === undefined) log.sessionId = sessionId;
}
