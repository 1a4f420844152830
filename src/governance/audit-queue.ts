import { AuditMeta, type AuditEvent } from './audit-event.js';

/** The log an event was recorded by: it hands the event to its built-in sinks. */
export interface QueuedFor {
  deliver(at: number, meta: AuditMeta, path: string | undefined, bytes: number | undefined, durationMs: number): void;
  deliverEvent(event: AuditEvent): void;
}

const NUMBERS = 3; // at, durationMs, bytes (NaN: none)
const REFERENCES = 3; // the log, the AuditMeta (or the event given whole), the path
/** Events queued before they are handed over within the operation that adds the last one. */
const MOST = 1024;

const numbers: number[] = [];
const references: unknown[] = [];
let count = 0;
let scheduled = false;
let delivering = false;
/** Whether the delivery after a turn's operations is running. */
let turnDelivery = false;
let afterTurn: (() => void)[] = [];

/**
 * The events of every audited workspace on their way to the built-in sinks (`memoryAuditSink`,
 * `jsonlAuditSink`), in the order they were recorded: an operation adds its event here, one write into a
 * small queue used over and over, and they are handed over together after the operations of the turn
 * (`setImmediate`), or at once when a sink is read, flushed or given an event directly, or when 1,024 wait.
 * Each operation used to hand its event to every sink itself, which cost each sink as much as this whole
 * queue. Sinks that are plain functions still get each event as the operation ends.
 */
export function enqueue(
  log: QueuedFor,
  at: number,
  meta: AuditMeta,
  path: string | undefined,
  bytes: number | undefined,
  durationMs: number,
): void {
  const n = count * NUMBERS;
  numbers[n] = at;
  numbers[n + 1] = durationMs;
  numbers[n + 2] = bytes ?? NaN;
  const r = count * REFERENCES;
  references[r] = log;
  references[r + 1] = meta;
  references[r + 2] = path;
  queued();
}

/** Queues an event given whole (a tool call's), in order with the rest. */
export function enqueueEvent(log: QueuedFor, event: AuditEvent): void {
  const r = count * REFERENCES;
  references[r] = log;
  references[r + 1] = event;
  references[r + 2] = undefined;
  queued();
}

function queued(): void {
  count += 1;
  if (!scheduled) {
    scheduled = true;
    setImmediate(deliverTurn);
  }
  if (count >= MOST) deliverQueued();
}

function deliverTurn(): void {
  scheduled = false;
  turnDelivery = true;
  try {
    deliverQueued();
  } finally {
    turnDelivery = false;
  }
  const after = afterTurn;
  afterTurn = [];
  for (const task of after) task();
}

/** Hands every queued event to its log's built-in sinks, oldest first (nothing when called while it runs). */
export function deliverQueued(): void {
  if (delivering || count === 0) return;
  delivering = true;
  try {
    for (let index = 0; index < count; index += 1) {
      const r = index * REFERENCES;
      const log = references[r] as QueuedFor;
      const head = references[r + 1];
      if (head instanceof AuditMeta) {
        const n = index * NUMBERS;
        const bytes = numbers[n + 2] as number;
        log.deliver(
          numbers[n] as number,
          head,
          references[r + 2] as string | undefined,
          Number.isNaN(bytes) ? undefined : bytes,
          numbers[n + 1] as number,
        );
      } else log.deliverEvent(head as AuditEvent);
    }
  } finally {
    references.fill(undefined, 0, count * REFERENCES);
    count = 0;
    delivering = false;
  }
}

/**
 * Runs `task` right after the delivery that follows a turn's operations, when that is what is running now (a
 * sink's batch then goes out in the turn after its operations, as it always did), else on the next turn.
 */
export function afterDelivery(task: () => void): void {
  if (turnDelivery) afterTurn.push(task);
  else setImmediate(task);
}
