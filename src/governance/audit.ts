import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { InvalidArgumentError, isWorkspaceError } from '../workspace/errors.js';
import { checkWallClock, isoTime, wallClockAt } from './audit-clock.js';
import {
  AuditMeta,
  ORCHESTRATOR,
  RECORD,
  type AuditActor,
  type AuditEvent,
  type AuditSink,
  type RecordFields,
  type RecordingSink,
} from './audit-event.js';
import { deliverQueued, enqueue, enqueueEvent, type QueuedFor } from './audit-queue.js';
import type { AuditedMethod } from './audited-methods.js';

export type { AuditActor, AuditEvent, AuditSink } from './audit-event.js';

/** The actor and session of the code running now, set by the session around each tool call. */
export const auditScope = new AsyncLocalStorage<{ sessionId: string; actor: AuditActor }>();

/**
 * How a workspace records its operations, built once with it (`auditRecorder`): each protocol method
 * records itself by explicit calls, so a workspace without sinks pays nothing and one with sinks no wrapper.
 * The hottest methods (read, write) use `start`, then `ok` or `failed`, from inside their own body: no
 * promise or reaction of their own. `start` gives the call (NaN when it is not recorded: no sinks, or the
 * workspace's compound operation is running it); `ok` records it and gives back its result, `failed`
 * records it and gives back the error to throw. `second`: a rename's or copy's `to`, a write's content.
 * The others hand their body to `record` (one promise reaction to learn when it ends).
 */
export interface AuditRecorder {
  start(): number;
  ok<T>(call: number, method: AuditedMethod, path: unknown, result: T, second?: unknown): T;
  failed(call: number, method: AuditedMethod, path: unknown, error: unknown, second?: unknown): unknown;
  /** Runs `task` and records it; a compound method's inner calls are not recorded. */
  record<T>(method: AuditedMethod, path: unknown, second: unknown, task: () => Promise<T>): Promise<T>;
  /** Has the sinks hold every event recorded so far (the workspace is being disposed). */
  flush(): void;
}

/** A workspace without sinks: records nothing. */
export const NOT_AUDITED: AuditRecorder = {
  start: () => NaN,
  ok: <T>(_call: number, _method: AuditedMethod, _path: unknown, result: T): T => result,
  failed: (_call: number, _method: AuditedMethod, _path: unknown, error: unknown): unknown => error,
  record: <T>(_method: AuditedMethod, _path: unknown, _second: unknown, task: () => Promise<T>): Promise<T> => task(),
  flush: () => undefined,
};

/** The audit of a workspace: its log when `sinks` holds any (validated: an array of functions), else nothing. */
export function auditRecorder(sinks: unknown): AuditRecorder {
  const log = new AuditLog(sinks);
  return log.active ? log : NOT_AUDITED;
}

/** The log whose workspace's compound operation is running now. */
const insideCompound = new AsyncLocalStorage<AuditLog>();

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
export class AuditLog implements AuditRecorder, QueuedFor {
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

  /** Whether this code runs inside a compound operation of this log's workspace. */
  #inCompound(): boolean {
    return this.#compounds > 0 && insideCompound.getStore() === this;
  }

  start(): number {
    if (this.#inCompound()) return NaN;
    const now = performance.now();
    checkWallClock(now);
    return now;
  }

  ok<T>(call: number, method: AuditedMethod, path: unknown, result: T, second?: unknown): T {
    if (!Number.isNaN(call)) this.#ended(method, path, method.to ? second : undefined, second, result, 'ok', call, auditScope.getStore());
    return result;
  }

  failed(call: number, method: AuditedMethod, path: unknown, error: unknown, second?: unknown): unknown {
    if (!Number.isNaN(call))
      this.#ended(method, path, method.to ? second : undefined, second, undefined, outcomeOf(error), call, auditScope.getStore());
    return error;
  }

  /**
   * Runs `task` and records it, for a method that does not record itself from inside its body: one promise
   * reaction to learn when it ends. A compound method (one built from the workspace's other protocol calls)
   * is recorded once: the calls it makes are not.
   */
  record<T>(method: AuditedMethod, path: unknown, second: unknown, task: () => Promise<T>): Promise<T> {
    if (this.#inCompound()) return task();
    const started = performance.now();
    checkWallClock(started);
    const scope = auditScope.getStore();
    let running: Promise<T>;
    try {
      running = method.compound ? this.#compound(task) : task();
    } catch (error) {
      running = Promise.reject(error);
    }
    const to = method.to ? second : undefined;
    return running.then(
      (result) => {
        this.#ended(method, path, to, second, result, 'ok', started, scope);
        return result;
      },
      (error: unknown) => {
        this.#ended(method, path, to, second, undefined, outcomeOf(error), started, scope);
        throw error;
      },
    );
  }

  /** Runs `task` with none of its operations recorded (a session's own bookkeeping: its history's snapshots). */
  unrecorded<T>(task: () => Promise<T>): Promise<T> {
    return this.#compound(task);
  }

  #compound<T>(task: () => Promise<T>): Promise<T> {
    this.#compounds += 1;
    let running: Promise<T>;
    try {
      running = insideCompound.run(this, task);
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.finally(() => (this.#compounds -= 1));
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

/** Registers a workspace's recorder, when it is a log, so that a session can record its tool calls there. */
export function registerAuditLog(workspace: object, recorder: AuditRecorder): void {
  if (recorder instanceof AuditLog) logs.set(workspace, recorder);
}

/** The audit log of a workspace, when it has sinks. */
export function auditLogOf(workspace: object): AuditLog | undefined {
  return logs.get(workspace);
}

/** Writes out what the audit of a workspace recorded so far (nothing when it has no sinks). */
/** Runs `task` on `workspace` without auditing what it does there (see `AuditLog.unrecorded`). */
export function unaudited<T>(workspace: object, task: () => Promise<T>): Promise<T> {
  const log = auditLogOf(workspace);
  return log === undefined ? task() : log.unrecorded(task);
}

export function flushAuditLog(workspace: object): void {
  logs.get(workspace)?.flush();
}

/** Names the session a workspace serves in its audit events (the first session to claim it keeps it). */
export function claimAuditLog(workspace: object, sessionId: string): void {
  const log = logs.get(workspace);
  if (log !== undefined && log.sessionId === undefined) log.sessionId = sessionId;
}
