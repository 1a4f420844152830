import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { InvalidArgumentError, isWorkspaceError } from '../workspace/errors.js';
import { deliverQueued, enqueue, enqueueEvent, type QueuedFor } from './audit-queue.js';
import {
  AuditMeta,
  AuditRecords,
  checkWallClock,
  isoTime,
  RECORD,
  recording,
  wallClockAt,
  type RecordFields,
  type RecordingSink,
} from './audit-records.js';

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

/**
 * Keeps the latest `max` (default 10 000) events in memory: for tests, dashboards, a session's own review.
 * The events the audit records are kept as their fields (see `AuditRecords`) and become `AuditEvent`s when
 * `events` is read, each once: `events` is one array, brought up to date on every read.
 */
export function memoryAuditSink(options: { max?: number } = {}): MemoryAuditSink {
  const max = options.max ?? 10_000;
  if (!Number.isSafeInteger(max) || max < 1)
    throw new InvalidArgumentError(`memoryAuditSink max must be a positive whole number, got ${String(max)}`);
  const events: AuditEvent[] = [];
  const kept = new AuditRecords(max);
  const sink = recording((event: AuditEvent): void => {
    deliverQueued(); // what the audit recorded before this comes first
    kept.pushEvent(event);
  }, kept.push);
  return Object.defineProperty(sink, 'events', {
    get: () => {
      deliverQueued();
      const fresh = kept.length;
      if (fresh === 0) return events;
      // `kept` holds at most `max`: when that many came since the last read, they are the latest `max`.
      if (fresh >= max) events.length = 0;
      for (let index = 0; index < fresh; index += 1) events.push(kept.event(index));
      kept.clear();
      if (events.length > max) events.splice(0, events.length - max);
      return events;
    },
  }) as MemoryAuditSink;
}

/** The actor and session of the code running now, set by the session around each tool call. */
export const auditScope = new AsyncLocalStorage<{ sessionId: string; actor: AuditActor }>();

/** The orchestrator as an actor: one frozen object, so a sink can recognise it by identity. */
export const ORCHESTRATOR: AuditActor = Object.freeze({ kind: 'orchestrator' });

/** A protocol method as the audit records it: its name, and where its arguments and result say what it touched. */
export interface AuditedMethod {
  op: string;
  /** Its place among the audited methods (where a log keeps its `AuditMeta` for successes). */
  index: number;
  /** The path it was given (recorded when a string). */
  path: (args: unknown[]) => unknown;
  /** Whether its second argument is a second path (rename, copy). */
  to: boolean;
  /** The bytes it moved: from its result, or when it failed (no result) from its second argument (a write's content). */
  bytes: ((result: unknown, second: unknown) => number | undefined) | undefined;
}

/**
 * How a protocol method records itself, from inside its own body (see `DriverWorkspace`): no wrapper, no
 * promise or reaction of its own. `start` gives the call (NaN when it is not recorded: no sinks, or the
 * workspace's compound operation is running it); `ok` records it and gives back its result, `failed`
 * records it and gives back the error to throw.
 */
export interface SelfAudit {
  start(workspace: object): number;
  ok<T>(call: number, method: AuditedMethod, path: unknown, result: T, second?: unknown): T;
  failed(call: number, method: AuditedMethod, path: unknown, error: unknown, second?: unknown): unknown;
}

/** A workspace without sinks: records nothing. */
export const NOT_AUDITED: SelfAudit = {
  start: () => NaN,
  ok: <T>(_call: number, _method: AuditedMethod, _path: unknown, result: T): T => result,
  failed: (_call: number, _method: AuditedMethod, _path: unknown, error: unknown): unknown => error,
};

/** The workspace whose compound operation is running now. */
const insideCompound = new AsyncLocalStorage<object>();

/** A sink and, for a built-in one, how it takes an event's fields. */
interface SinkEntry {
  sink: AuditSink;
  record: RecordFields | undefined;
}

/**
 * A workspace's audit log: hands each event to every sink. A sink that throws or rejects never breaks the
 * operation: its first failure is reported once as a process warning (`SESSIONFS_AUDIT_SINK`), later
 * ones are dropped silently.
 */
export class AuditLog implements SelfAudit, QueuedFor {
  readonly #sinks: SinkEntry[];
  /** The built-in sinks (fields, through the queue), and the others (an event, at once). */
  readonly #builtIn: SinkEntry[];
  readonly #plain: SinkEntry[];
  readonly #failed = new Set<AuditSink>();
  #compounds = 0;
  /** Per method, what its latest success said besides path and times: reused while the actor stays the same. */
  readonly #metas: (AuditMeta | undefined)[] = [];
  /** The session this workspace serves, when its operations run outside a tool call. */
  sessionId: string | undefined;

  constructor(sinks: unknown) {
    if (sinks === undefined) this.#sinks = [];
    else if (!Array.isArray(sinks) || !sinks.every((sink) => typeof sink === 'function'))
      throw new InvalidArgumentError('audit must be an array of sinks (functions of an event, e.g. memoryAuditSink())');
    else this.#sinks = (sinks as RecordingSink[]).map((sink) => ({ sink, record: sink[RECORD] }));
    this.#builtIn = this.#sinks.filter((entry) => entry.record !== undefined);
    this.#plain = this.#sinks.filter((entry) => entry.record === undefined);
  }

  get active(): boolean {
    return this.#sinks.length > 0;
  }

  /** Runs a compound operation of `workspace` (one built from its other protocol calls, recorded once): those calls are not recorded. */
  compound<T>(workspace: object, task: () => Promise<T>): Promise<T> {
    this.#compounds += 1;
    let running: Promise<T>;
    try {
      running = insideCompound.run(workspace, task);
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.finally(() => (this.#compounds -= 1));
  }

  /** Whether this code runs inside a compound operation of `workspace`. */
  inCompound(workspace: object): boolean {
    return this.#compounds > 0 && insideCompound.getStore() === workspace;
  }

  start(workspace: object): number {
    if (this.inCompound(workspace)) return NaN;
    const now = performance.now();
    checkWallClock(now);
    return now;
  }

  ok<T>(call: number, method: AuditedMethod, path: unknown, result: T, second?: unknown): T {
    if (!Number.isNaN(call)) this.#ended(method, path, undefined, second, result, 'ok', call, auditScope.getStore());
    return result;
  }

  failed(call: number, method: AuditedMethod, path: unknown, error: unknown, second?: unknown): unknown {
    if (!Number.isNaN(call)) this.#ended(method, path, undefined, second, undefined, outcomeOf(error), call, auditScope.getStore());
    return error;
  }

  /**
   * Runs `task` on `args` (with `self` as `this`) and records it, for a method that does not record itself:
   * one promise reaction to learn when it ends. What it touched comes from its arguments and, for byte
   * counts, its result.
   */
  record<T>(method: AuditedMethod, args: unknown[], task: (...args: unknown[]) => Promise<T>, self?: unknown): Promise<T> {
    const started = performance.now();
    checkWallClock(started);
    const scope = auditScope.getStore();
    let running: Promise<T>;
    try {
      running = task.apply(self, args);
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.then(
      (result) => {
        this.#ended(method, method.path(args), method.to ? args[1] : undefined, args[1], result, 'ok', started, scope);
        return result;
      },
      (error: unknown) => {
        this.#ended(method, method.path(args), method.to ? args[1] : undefined, args[1], undefined, outcomeOf(error), started, scope);
        throw error;
      },
    );
  }

  /**
   * One operation's event: queued for the built-in sinks (as fields, see `audit-queue.ts`), built once and
   * handed to the other sinks now. Start time and duration come from the clock reading taken at the start.
   */
  #ended(
    method: AuditedMethod,
    path: unknown,
    to: unknown,
    second: unknown,
    result: unknown,
    outcome: string,
    started: number,
    scope: { sessionId: string; actor: AuditActor } | undefined,
  ): void {
    // Microseconds are all a log needs: a rounded number is shorter to write and to read.
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const at = wallClockAt(started);
    const sessionId = scope === undefined ? this.sessionId : scope.sessionId;
    const actor = scope === undefined ? ORCHESTRATOR : scope.actor;
    const bytes = method.bytes?.(result, second);
    const pathText = typeof path === 'string' ? path : undefined;
    const meta = this.#meta(method, outcome, typeof to === 'string' ? to : undefined, sessionId, actor);
    if (this.#builtIn.length > 0) enqueue(this, at, meta, pathText, bytes, durationMs);
    if (this.#plain.length === 0) return;
    const event = auditEvent(isoTime(at), sessionId, actor, method.op, pathText, meta.to, bytes, outcome, durationMs);
    for (const { sink } of this.#plain) {
      try {
        this.#handOver(sink, event);
      } catch (error) {
        this.#sinkFailed(sink, error);
      }
    }
  }

  /** A queued event, to the built-in sinks. */
  deliver(at: number, meta: AuditMeta, path: string | undefined, bytes: number | undefined, durationMs: number): void {
    for (const entry of this.#builtIn) {
      try {
        (entry.record as RecordFields)(at, meta, path, bytes, durationMs);
      } catch (error) {
        this.#sinkFailed(entry.sink, error);
      }
    }
  }

  /** A queued event given whole, to the built-in sinks. */
  deliverEvent(event: AuditEvent): void {
    for (const { sink } of this.#builtIn) {
      try {
        this.#handOver(sink, event);
      } catch (error) {
        this.#sinkFailed(sink, error);
      }
    }
  }

  /**
   * Hands every queued event to the built-in sinks and has those that write somewhere (the JSONL sink) write
   * now: when a workspace or session is disposed, its sinks hold every event it recorded.
   */
  flush(): void {
    deliverQueued();
    for (const { sink } of this.#builtIn) {
      const flush = (sink as { flush?: unknown }).flush;
      if (typeof flush !== 'function') continue;
      try {
        (flush as () => void).call(sink);
      } catch (error) {
        this.#sinkFailed(sink, error);
      }
    }
  }

  #meta(method: AuditedMethod, outcome: string, to: string | undefined, sessionId: string | undefined, actor: AuditActor): AuditMeta {
    if (outcome !== 'ok' || to !== undefined) return new AuditMeta(sessionId, actor, method.op, outcome, to);
    const kept = this.#metas[method.index];
    if (kept !== undefined && kept.actor === actor && kept.sessionId === sessionId) return kept;
    return (this.#metas[method.index] = new AuditMeta(sessionId, actor, method.op, outcome, undefined));
  }

  /** Hands a finished event to every sink (the built-in ones through the queue, in order with the rest). */
  emit(event: AuditEvent): void {
    if (this.#builtIn.length > 0) enqueueEvent(this, event);
    for (const { sink } of this.#plain) {
      try {
        this.#handOver(sink, event);
      } catch (error) {
        this.#sinkFailed(sink, error);
      }
    }
  }

  #handOver(sink: AuditSink, event: AuditEvent): void {
    const result = sink(event);
    if (result !== undefined && typeof (result as Promise<void>).then === 'function')
      (result as Promise<void>).then(undefined, (error: unknown) => this.#sinkFailed(sink, error));
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
  path: unknown,
  to: unknown,
  bytes: number | undefined,
  outcome: string,
  durationMs: number,
): AuditEvent {
  const event: AuditEvent = { at, actor, op, outcome, durationMs };
  if (sessionId !== undefined) event.sessionId = sessionId;
  if (typeof path === 'string') event.path = path;
  if (typeof to === 'string') event.to = to;
  if (bytes !== undefined) event.bytes = bytes;
  return event;
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

/** Writes out what the audit of a workspace recorded so far (nothing when it has no sinks). */
export function flushAuditLog(workspace: object): void {
  logs.get(workspace)?.flush();
}

/** Names the session a workspace serves in its audit events (the first session to claim it keeps it). */
export function claimAuditLog(workspace: object, sessionId: string): void {
  const log = logs.get(workspace);
  if (log !== undefined && log.sessionId === undefined) log.sessionId = sessionId;
}
