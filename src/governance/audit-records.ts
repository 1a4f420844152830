import { AuditMeta, type AuditActor, type AuditEvent, type RecordFields } from './audit-event.js';
import { isoTime } from './audit-clock.js';

/** One event as {@link AuditRecords} hands it out: the fields of a recorded one, or an event given whole. */
export interface RecordView {
  /** The event as it was given to the sink (a tool call's, a caller's): the other fields are unset then. */
  event: AuditEvent | undefined;
  /** What a recorded event says besides path, times and bytes (its fields are copied below too). */
  meta: AuditMeta | undefined;
  at: number;
  sessionId: string | undefined;
  actor: AuditActor;
  op: string;
  path: string | undefined;
  to: string | undefined;
  bytes: number | undefined;
  outcome: string;
  durationMs: number;
}

const NUMBERS = 3; // at, durationMs, bytes (NaN: none)
const REFERENCES = 2; // the AuditMeta (or the event given whole), the path

/**
 * The latest `capacity` events (oldest first) in flat columns: numbers in a Float64Array, the rest in one
 * array, grown as needed up to `capacity`, then reused as a ring. Keeping an event costs no object of its
 * own, so a sink holding thousands of them gives the garbage collector nothing new to copy.
 */
export class AuditRecords {
  readonly #capacity: number;
  #numbers = new Float64Array(0);
  #references: unknown[] = [];
  #size = 0;
  #start = 0;
  #count = 0;
  readonly #view: RecordView = {
    event: undefined,
    meta: undefined,
    at: 0,
    sessionId: undefined,
    actor: { kind: 'orchestrator' },
    op: '',
    path: undefined,
    to: undefined,
    bytes: undefined,
    outcome: '',
    durationMs: 0,
  };

  constructor(capacity = Infinity) {
    this.#capacity = capacity;
  }

  get length(): number {
    return this.#count;
  }

  /** Keeps a recorded event's fields (the oldest goes when full). */
  readonly push: RecordFields = (at, meta, path, bytes, durationMs) => {
    const slot = this.#slot();
    const numbers = this.#numbers;
    const n = slot * NUMBERS;
    numbers[n] = at;
    numbers[n + 1] = durationMs;
    numbers[n + 2] = bytes ?? NaN;
    const references = this.#references;
    const r = slot * REFERENCES;
    references[r] = meta;
    references[r + 1] = path;
  };

  /** Keeps an event given whole, as it is (the oldest goes when full). */
  pushEvent(event: AuditEvent): void {
    const r = this.#slot() * REFERENCES;
    this.#references[r] = event;
    this.#references[r + 1] = undefined;
  }

  /** The `index`-th oldest event kept, in a view reused by the next call (copy what must outlive it). */
  view(index: number): RecordView {
    const at = this.#start + index;
    const slot = at < this.#size ? at : at - this.#size;
    const view = this.#view;
    const r = slot * REFERENCES;
    const head = this.#references[r];
    if (!(head instanceof AuditMeta)) {
      view.event = head as AuditEvent;
      return view;
    }
    view.event = undefined;
    view.meta = head;
    const n = slot * NUMBERS;
    view.at = this.#numbers[n] as number;
    view.durationMs = this.#numbers[n + 1] as number;
    const bytes = this.#numbers[n + 2] as number;
    view.bytes = Number.isNaN(bytes) ? undefined : bytes;
    view.sessionId = head.sessionId;
    view.actor = head.actor;
    view.op = head.op;
    view.path = this.#references[r + 1] as string | undefined;
    view.to = head.to;
    view.outcome = head.outcome;
    return view;
  }

  /** The `index`-th oldest event as an `AuditEvent` (a new object for a recorded one). */
  event(index: number): AuditEvent {
    const view = this.view(index);
    if (view.event !== undefined) return view.event;
    const event: AuditEvent = { at: isoTime(view.at), actor: view.actor, op: view.op, outcome: view.outcome, durationMs: view.durationMs };
    if (view.sessionId !== undefined) event.sessionId = view.sessionId;
    if (view.path !== undefined) event.path = view.path;
    if (view.to !== undefined) event.to = view.to;
    if (view.bytes !== undefined) event.bytes = view.bytes;
    return event;
  }

  /** Forgets every event (letting go of what they referenced). */
  clear(): void {
    this.#references.fill(undefined, 0, this.#size * REFERENCES);
    this.#start = 0;
    this.#count = 0;
  }

  /** The slot of the next event: a free one (growing the columns when allowed), else the oldest's. */
  #slot(): number {
    const count = this.#count;
    const size = this.#size;
    if (count < size) {
      this.#count = count + 1;
      const slot = this.#start + count;
      return slot < size ? slot : slot - size;
    }
    if (size < this.#capacity) {
      this.#grow();
      return this.#slot();
    }
    const slot = this.#start;
    this.#start = slot + 1 === size ? 0 : slot + 1;
    return slot;
  }

  #grow(): void {
    const size = Math.min(this.#capacity, Math.max(64, this.#size * 2));
    const numbers = new Float64Array(size * NUMBERS);
    const references = new Array<unknown>(size * REFERENCES).fill(undefined);
    for (let index = 0; index < this.#count; index += 1) {
      const from = (this.#start + index) % this.#size;
      numbers.set(this.#numbers.subarray(from * NUMBERS, (from + 1) * NUMBERS), index * NUMBERS);
      for (let k = 0; k < REFERENCES; k += 1) references[index * REFERENCES + k] = this.#references[from * REFERENCES + k];
    }
    this.#numbers = numbers;
    this.#references = references;
    this.#size = size;
    this.#start = 0;
  }
}
