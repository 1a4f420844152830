import { InvalidArgumentError } from '../workspace/errors.js';
import { recording, type AuditEvent, type AuditSink } from './audit-event.js';
import { deliverQueued } from './audit-queue.js';
import { AuditRecords } from './audit-records.js';

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
