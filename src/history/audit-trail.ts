import type { MemoryAuditSink } from '../governance/memory-sink.js';
import type { AuditEventSummary } from './types.js';

/** The audit events kept per operation; the rest are counted (`auditOmitted`). */
export const MAX_OPERATION_AUDIT = 200;

/**
 * The audit events of a session's workspace, as a memory sink gathers them, handed out per operation: a
 * tool call gets the events its call id carries, any other operation the orchestrator's since the one
 * before. Each take empties the sink, so that it holds no more than one operation's events.
 */
export class AuditTrail {
  readonly #sink: MemoryAuditSink;

  constructor(sink: MemoryAuditSink) {
    this.#sink = sink;
    this.#drain();
  }

  take(callId: string | undefined): { audit: AuditEventSummary[]; omitted: number } {
    const audit: AuditEventSummary[] = [];
    let omitted = 0;
    for (const event of this.#drain()) {
      const ours =
        callId === undefined ? event.actor.kind === 'orchestrator' : event.actor.kind === 'tool' && event.actor.callId === callId;
      if (!ours) continue;
      if (audit.length === MAX_OPERATION_AUDIT) {
        omitted += 1;
        continue;
      }
      const failed = event.outcome !== 'ok';
      audit.push({
        op: event.op,
        ...(event.path === undefined ? {} : { path: event.path }),
        ...(event.to === undefined ? {} : { to: event.to }),
        outcome: failed ? 'failed' : 'ok',
        ...(failed ? { code: event.outcome } : {}),
        ...(event.bytes === undefined ? {} : { bytes: event.bytes }),
        durationMs: event.durationMs,
      });
    }
    return { audit, omitted };
  }

  /** The events the sink holds, taken out of it (its `events` is one array it keeps up to date). */
  #drain() {
    return this.#sink.events.splice(0);
  }
}
