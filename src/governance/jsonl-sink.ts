import * as fs from 'node:fs';
import { InvalidArgumentError } from '../workspace/errors.js';
import { ORCHESTRATOR, type AuditActor, type AuditEvent, type AuditSink } from './audit.js';
import { AuditRecords, isoTime, recording, type RecordFields, type RecordView } from './audit-records.js';

/** A sink appending one JSON object per line to a file. */
export interface JsonlAuditSink extends AuditSink {
  /** Writes the events still queued (they are written once per event-loop turn anyway). */
  flush(): void;
  /** Flushes, then closes the file; events after that are refused (the audit reports it once). */
  close(): void;
}

/**
 * Appends every event to `file` as one line of JSON (the file is created with mode 0600 when missing).
 * Events are queued and written together once per event-loop turn, each batch with one `write` on a file
 * opened for appending, and at process exit; so a crash, even `kill -9`, leaves every line written
 * before it whole, losing at most the events of that last turn. A line torn by a crash (no final newline)
 * is cut off when the file is opened again, so the log stays one complete JSON object per line.
 * A failed write is thrown by the next event, which the workspace's audit reports once; an event that cannot
 * be written as JSON (one a caller built) is left out alone, and the next event (still written) throws why.
 */
export function jsonlAuditSink(file: string): JsonlAuditSink {
  if (typeof file !== 'string' || file === '') throw new InvalidArgumentError('jsonlAuditSink needs a file path');
  let fd: number | undefined = fs.openSync(file, 'a+', 0o600);
  cutTornLine(fd);
  const queued = new AuditRecords();
  let scratch = Buffer.allocUnsafeSlow(64 * 1024);
  let scheduled = false;
  let failure: unknown;
  /** An event that could not be written as JSON: reported once, by the next event, which is still written. */
  let refused: unknown;

  // Events are serialised here, once per batch, into one string written with one call: cheaper than a
  // string per event joined later, and nothing is paid inside the operation that emitted them.
  const flush = (): void => {
    scheduled = false;
    if (queued.length === 0 || fd === undefined) return;
    try {
      const out: string[] = [];
      for (let index = 0; index < queued.length; index += 1) {
        const record = queued.view(index);
        if (record.event === undefined && plainActor(record.actor)) {
          appendRecord(out, record);
          continue;
        }
        const length = out.length;
        try {
          appendLine(out, queued.event(index));
        } catch (error) {
          out.length = length; // only a caller-built event can fail (JSON.stringify): it alone is left out
          refused ??= error;
        }
      }
      queued.clear();
      const text = out.join('');
      // Encoded into a buffer kept from batch to batch: a fresh 40 KB buffer per batch cost ten times the encoding.
      if (scratch.byteLength < text.length * 3 && text.length * 3 <= SCRATCH_MAX) scratch = Buffer.allocUnsafeSlow(text.length * 3);
      const bytes = scratch.byteLength >= text.length * 3 ? scratch.subarray(0, scratch.write(text, 0, 'utf8')) : Buffer.from(text);
      let written = 0;
      while (written < bytes.byteLength) written += fs.writeSync(fd, bytes, written);
    } catch (error) {
      failure ??= error;
      queued.clear();
    }
  };
  const close = (): void => {
    flush();
    if (fd !== undefined) fs.closeSync(fd);
    fd = undefined;
    process.off('exit', flush);
  };
  process.on('exit', flush);

  /** Before an event is queued: the sink still works. After: the batch is due, and a refused event is reported. */
  const accepting = (): void => {
    if (failure !== undefined) throw failure;
    if (fd === undefined) throw new InvalidArgumentError(`the audit log ${file} was closed`);
  };
  const queuedOne = (): void => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    if (refused !== undefined) {
      const error = refused;
      refused = undefined;
      throw error;
    }
  };
  const sink = (event: AuditEvent): void => {
    accepting();
    queued.pushEvent(event);
    queuedOne();
  };
  const record: RecordFields = (at, sessionId, actor, op, path, to, bytes, outcome, durationMs) => {
    accepting();
    queued.push(at, sessionId, actor, op, path, to, bytes, outcome, durationMs);
    queuedOne();
  };
  return Object.assign(recording(sink, record), { flush, close });
}

/** The largest encoding buffer a sink keeps between batches (a bigger batch gets one of its own). */
const SCRATCH_MAX = 4 * 1024 * 1024;

const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** A string as JSON: printable ASCII without quotes or backslashes as it is, anything else through JSON.stringify. */
function text(out: string[], value: string): void {
  if (PLAIN.test(value)) out.push('"', value, '"');
  else out.push(JSON.stringify(value));
}
/** Fields with few distinct values (`op`, `outcome`): each value's JSON is worked out once. */
const KNOWN_KEPT = 512;
let known = new Map<string, string>();
function knownText(out: string[], value: string): void {
  let json = known.get(value);
  if (json === undefined) {
    json = PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
    if (known.size >= KNOWN_KEPT) known = new Map();
    known.set(value, json);
  }
  out.push(json);
}
const optional = (value: unknown, type: 'string' | 'number'): boolean => value === undefined || typeof value === type;

/** Whether the actor is one of the two shapes the audit builds (anything else goes through JSON.stringify). */
function plainActor(actor: unknown): boolean {
  if (actor === ORCHESTRATOR) return true;
  if (typeof actor !== 'object' || actor === null) return false;
  const { kind, tool, callId } = actor as { kind?: unknown; tool?: unknown; callId?: unknown };
  const members = Object.keys(actor).length;
  return (
    (kind === 'orchestrator' && members === 1) ||
    (kind === 'tool' && typeof tool === 'string' && typeof callId === 'string' && members === 3)
  );
}

/**
 * Appends an event as one line of JSON to `out`, field by field, as pieces a single `join` makes into one
 * flat string (building each line by concatenation made ropes that cost more to flatten at the write than
 * JSON.stringify itself). An event of any other shape than the audit's (one a caller built) goes through
 * JSON.stringify.
 */
function appendLine(out: string[], event: AuditEvent): void {
  const { at, sessionId, actor, op, path, to, bytes, outcome, durationMs } = event;
  const present = 5 + Number(sessionId !== undefined) + Number(path !== undefined) + Number(to !== undefined) + Number(bytes !== undefined);
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
    out.push(JSON.stringify(event), '\n');
    return;
  }
  appendFields(out, at, sessionId, actor, op, path, to, bytes, outcome, durationMs);
}

/** A recorded event (its fields, see `AuditRecords`) as one line of JSON: the same line as its `AuditEvent`. */
function appendRecord(out: string[], record: RecordView): void {
  const { at, sessionId, actor, op, path, to, bytes, outcome, durationMs } = record;
  appendFields(out, isoTime(at), sessionId, actor, op, path, to, bytes, outcome, durationMs);
}

function appendFields(
  out: string[],
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
  out.push('{"at":');
  text(out, at);
  if (sessionId !== undefined) {
    out.push(',"sessionId":');
    text(out, sessionId);
  }
  if (actor.kind === 'tool') {
    out.push(',"actor":{"kind":"tool","tool":');
    text(out, actor.tool);
    out.push(',"callId":');
    text(out, actor.callId);
    out.push('},"op":');
  } else out.push(',"actor":{"kind":"orchestrator"},"op":');
  knownText(out, op);
  if (path !== undefined) {
    out.push(',"path":');
    text(out, path);
  }
  if (to !== undefined) {
    out.push(',"to":');
    text(out, to);
  }
  if (bytes !== undefined) out.push(',"bytes":', String(bytes));
  out.push(',"outcome":');
  knownText(out, outcome);
  out.push(',"durationMs":', String(durationMs), '}\n');
}

/** One event as its line of JSON (newline included), as the sink writes it. */
export function jsonLine(event: AuditEvent): string {
  const out: string[] = [];
  appendLine(out, event);
  return out.join('');
}

/** Cuts a last line a crash left without its newline, so the next line starts clean. */
function cutTornLine(fd: number): void {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return;
  const tail = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const length = Math.min(tail.byteLength, end);
    fs.readSync(fd, tail, 0, length, end - length);
    const newline = tail.subarray(0, length).lastIndexOf(0x0a);
    if (newline >= 0) {
      const keep = end - length + newline + 1;
      if (keep !== size) fs.ftruncateSync(fd, keep);
      return;
    }
    end -= length;
  }
  fs.ftruncateSync(fd, 0);
}

/** The events of a JSONL audit log, oldest first; a last line torn by a crash is left out. */
export function readAuditLog(file: string): AuditEvent[] {
  const text = fs.readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEvent);
}
