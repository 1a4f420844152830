import { isoTime } from './audit-clock.js';
import { ORCHESTRATOR, type AuditActor, type AuditEvent, type AuditMeta } from './audit-event.js';
import type { RecordView } from './audit-records.js';

/** The largest buffer kept from one batch to the next (a bigger batch gets one of its own, then lets it go). */
const KEPT_BYTES = 4 * 1024 * 1024;
const INITIAL_BYTES = 64 * 1024;

/**
 * Audit events as lines of JSON, encoded straight into one buffer kept from batch to batch: no string per
 * field, per line or per batch. Printable ASCII (every path, name and code the audit writes in practice) is
 * copied byte by byte; any other string goes through JSON.stringify and UTF-8. Numbers are written digit by
 * digit: whole numbers, and the audit's durations (whole microseconds) as the decimals JavaScript prints
 * for them. Each line is exactly what JSON.stringify makes of its fields in the order `at`, `sessionId`,
 * `actor`, `op`, `path`, `to`, `bytes`, `outcome`, `durationMs`.
 */
export class JsonLines {
  #bytes = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  #length = 0;

  /** The lines so far (a view of the buffer: use it before the next call). */
  get bytes(): Buffer {
    return this.#bytes.subarray(0, this.#length);
  }

  /** Forgets the lines (a buffer grown past what is kept is let go). */
  reset(): void {
    this.#length = 0;
    if (this.#bytes.byteLength > KEPT_BYTES) this.#bytes = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  }

  /**
   * A recorded event's line (see `AuditRecords`): the same bytes as {@link event} would write for it, with
   * the runs that repeat from line to line copied from encodings kept for them: `at` within a millisecond,
   * and what its `AuditMeta` says (session, actor and op; outcome), encoded once per meta.
   */
  record(record: RecordView): void {
    const meta = record.meta as AuditMeta;
    const [head, tail] = (meta.lines ??= metaLines(meta));
    this.#copy(atField(record.at));
    this.#copy(head);
    if (record.path !== undefined) {
      this.#ascii(',"path":');
      this.#string(record.path);
    }
    if (meta.to !== undefined) {
      this.#ascii(',"to":');
      this.#string(meta.to);
    }
    if (record.bytes !== undefined) {
      this.#ascii(',"bytes":');
      this.#number(record.bytes);
    }
    this.#copy(tail);
    this.#number(record.durationMs);
    this.#ascii('}\n');
  }

  /**
   * An event's line. One of another shape than the audit's (a caller's) is written as JSON.stringify makes
   * it; one that cannot be (a BigInt, a cycle) throws and leaves nothing written.
   */
  event(event: AuditEvent): void {
    const { at, sessionId, actor, op, path, to, bytes, outcome, durationMs } = event;
    const present =
      5 + Number(sessionId !== undefined) + Number(path !== undefined) + Number(to !== undefined) + Number(bytes !== undefined);
    if (
      !plainActor(actor) ||
      typeof at !== 'string' ||
      typeof op !== 'string' ||
      typeof outcome !== 'string' ||
      !Number.isFinite(durationMs) ||
      !optional(sessionId, 'string') ||
      !optional(path, 'string') ||
      !optional(to, 'string') ||
      !(bytes === undefined || Number.isFinite(bytes)) ||
      Object.keys(event).length !== present
    ) {
      this.#utf8(`${JSON.stringify(event)}\n`);
      return;
    }
    this.#fields(at, sessionId, actor, op, path, to, bytes, outcome, durationMs);
  }

  #fields(
    at: string,
    sessionId: string | undefined,
    actor: AuditActor,
    op: string,
    path: string | undefined,
    to: string | undefined,
    bytes: number | undefined,
    outcome: string,
    durationMs: number,
  ): void {
    this.#ascii('{"at":');
    this.#string(at);
    if (sessionId !== undefined) {
      this.#ascii(',"sessionId":');
      this.#string(sessionId);
    }
    if (actor.kind === 'tool') {
      this.#ascii(',"actor":{"kind":"tool","tool":');
      this.#string(actor.tool);
      this.#ascii(',"callId":');
      this.#string(actor.callId);
      this.#ascii('},"op":');
    } else this.#ascii(',"actor":{"kind":"orchestrator"},"op":');
    this.#string(op);
    if (path !== undefined) {
      this.#ascii(',"path":');
      this.#string(path);
    }
    if (to !== undefined) {
      this.#ascii(',"to":');
      this.#string(to);
    }
    if (bytes !== undefined) {
      this.#ascii(',"bytes":');
      this.#number(bytes);
    }
    this.#ascii(',"outcome":');
    this.#string(outcome);
    this.#ascii(',"durationMs":');
    this.#number(durationMs);
    this.#ascii('}\n');
  }

  /** Room for `more` bytes after the lines so far. */
  #room(more: number): Buffer {
    if (this.#length + more > this.#bytes.byteLength) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.#bytes.byteLength * 2, this.#length + more));
      this.#bytes.copy(grown, 0, 0, this.#length);
      this.#bytes = grown;
    }
    return this.#bytes;
  }

  #copy(encoded: Uint8Array): void {
    this.#room(encoded.byteLength).set(encoded, this.#length);
    this.#length += encoded.byteLength;
  }

  /** Text known to be printable ASCII, as it is. */
  #ascii(text: string): void {
    const bytes = this.#room(text.length);
    let length = this.#length;
    for (let index = 0; index < text.length; index += 1) bytes[length++] = text.charCodeAt(index);
    this.#length = length;
  }

  #utf8(text: string): void {
    const bytes = this.#room(text.length * 3);
    this.#length += bytes.write(text, this.#length, 'utf8');
  }

  /** A string as JSON: quoted as it is when it is printable ASCII without `"` or `\`, through JSON.stringify otherwise. */
  #string(text: string): void {
    const bytes = this.#room(text.length + 2);
    const start = this.#length;
    let length = start;
    bytes[length++] = 0x22;
    for (let index = 0; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) {
        this.#length = start;
        this.#utf8(JSON.stringify(text));
        return;
      }
      bytes[length++] = code;
    }
    bytes[length++] = 0x22;
    this.#length = length;
  }

  /** A finite number as JSON.stringify writes it; whole numbers and whole microseconds digit by digit. */
  #number(value: number): void {
    const thousandths = Math.round(value * 1000);
    if (!(thousandths >= 0 && thousandths <= 1e15 && thousandths / 1000 === value)) {
      this.#ascii(String(value));
      return;
    }
    const whole = Math.floor(thousandths / 1000);
    let fraction = thousandths - whole * 1000;
    this.#digits(whole);
    if (fraction === 0) return;
    // 0.125 prints as "0.125", 0.1 as "0.1", 0.05 as "0.05": three digits, the trailing zeros dropped.
    let places = 3;
    while (fraction % 10 === 0) {
      fraction /= 10;
      places -= 1;
    }
    const bytes = this.#room(places + 1);
    bytes[this.#length++] = 0x2e;
    this.#length += places;
    for (let at = this.#length - 1; places > 0; places -= 1, at -= 1) {
      bytes[at] = 0x30 + (fraction % 10);
      fraction = Math.floor(fraction / 10);
    }
  }

  /** A whole number of at most 13 digits (a safe integer here), in decimal. */
  #digits(value: number): void {
    let count = 1;
    for (let power = 10; power <= value; power *= 10) count += 1;
    const bytes = this.#room(count);
    this.#length += count;
    for (let at = this.#length - 1; count > 0; count -= 1, at -= 1) {
      bytes[at] = 0x30 + (value % 10);
      value = Math.floor(value / 10);
    }
  }
}

let atMs = NaN;
let atBytes = new Uint8Array(0);

/** `{"at":"…"` for a time, encoded once per millisecond. */
function atField(at: number): Uint8Array {
  if (Math.floor(at) !== atMs) {
    atMs = Math.floor(at);
    atBytes = Buffer.from(`{"at":${JSON.stringify(isoTime(at))}`, 'utf8');
  }
  return atBytes;
}

/** A meta's runs of a line: `,"sessionId":…,"actor":…,"op":…` and `,"outcome":…,"durationMs":`, as `#fields` writes them. */
function metaLines(meta: AuditMeta): [Uint8Array, Uint8Array] {
  const { sessionId, actor, op, outcome } = meta;
  const session = sessionId === undefined ? '' : `,"sessionId":${JSON.stringify(sessionId)}`;
  const who =
    actor.kind === 'tool'
      ? `{"kind":"tool","tool":${JSON.stringify(actor.tool)},"callId":${JSON.stringify(actor.callId)}}`
      : '{"kind":"orchestrator"}';
  return [
    Buffer.from(`${session},"actor":${who},"op":${JSON.stringify(op)}`, 'utf8'),
    Buffer.from(`,"outcome":${JSON.stringify(outcome)},"durationMs":`, 'utf8'),
  ];
}

const optional = (value: unknown, type: 'string' | 'number'): boolean => value === undefined || typeof value === type;

/** Whether the actor is one of the two shapes the audit builds (anything else goes through JSON.stringify). */
export function plainActor(actor: unknown): boolean {
  if (actor === ORCHESTRATOR) return true;
  if (typeof actor !== 'object' || actor === null) return false;
  const { kind, tool, callId } = actor as { kind?: unknown; tool?: unknown; callId?: unknown };
  const members = Object.keys(actor).length;
  return (
    (kind === 'orchestrator' && members === 1) ||
    (kind === 'tool' && typeof tool === 'string' && typeof callId === 'string' && members === 3)
  );
}

/** One event as its line of JSON (newline included), as the sink writes it. */
export function jsonLine(event: AuditEvent): string {
  const lines = new JsonLines();
  lines.event(event);
  return lines.bytes.toString('utf8');
}
