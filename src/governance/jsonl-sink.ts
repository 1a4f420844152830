import * as fs from 'node:fs';
import { InvalidArgumentError } from '../workspace/errors.js';
import { ORCHESTRATOR, type AuditEvent, type AuditSink } from './audit.js';

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
 * A failed write is thrown by the next event, which the workspace's audit reports once.
 */
export function jsonlAuditSink(file: string): JsonlAuditSink {
  if (typeof file !== 'string' || file === '') throw new InvalidArgumentError('jsonlAuditSink needs a file path');
  let fd: number | undefined = fs.openSync(file, 'a+', 0o600);
  cutTornLine(fd);
  let queued: AuditEvent[] = [];
  let scheduled = false;
  let failure: unknown;

  // Events are serialised here, once per batch, into one string written with one call: cheaper than a
  // string per event joined later, and nothing is paid inside the operation that emitted them.
  const flush = (): void => {
    scheduled = false;
    if (queued.length === 0 || fd === undefined) return;
    const events = queued;
    queued = [];
    try {
      let text = '';
      for (const event of events) text += jsonLine(event);
      const bytes = Buffer.from(text);
      let written = 0;
      while (written < bytes.byteLength) written += fs.writeSync(fd, bytes, written);
    } catch (error) {
      failure ??= error;
    }
  };
  const close = (): void => {
    flush();
    if (fd !== undefined) fs.closeSync(fd);
    fd = undefined;
    process.off('exit', flush);
  };
  process.on('exit', flush);

  const sink = (event: AuditEvent): void => {
    if (failure !== undefined) throw failure;
    if (fd === undefined) throw new InvalidArgumentError(`the audit log ${file} was closed`);
    queued.push(event);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return Object.assign(sink, { flush, close });
}

const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** A string as JSON: printable ASCII without quotes or backslashes as it is, anything else through JSON.stringify. */
const text = (value: string): string => (PLAIN.test(value) ? `"${value}"` : JSON.stringify(value));
const optional = (value: unknown, type: 'string' | 'number'): boolean => value === undefined || typeof value === type;

/** The actor as JSON, when it is one of the two shapes the audit builds. */
function actorJson(actor: unknown): string | undefined {
  if (actor === ORCHESTRATOR) return '{"kind":"orchestrator"}';
  if (typeof actor !== 'object' || actor === null) return undefined;
  const { kind, tool, callId } = actor as { kind?: unknown; tool?: unknown; callId?: unknown };
  const members = Object.keys(actor).length;
  if (kind === 'orchestrator' && members === 1) return '{"kind":"orchestrator"}';
  if (kind === 'tool' && typeof tool === 'string' && typeof callId === 'string' && members === 3)
    return `{"kind":"tool","tool":${text(tool)},"callId":${text(callId)}}`;
  return undefined;
}

/**
 * An event as one line of JSON, written field by field (about three times faster than JSON.stringify on
 * the hot path); an event of any other shape (one a caller built) goes through JSON.stringify.
 */
export function jsonLine(event: AuditEvent): string {
  const { at, sessionId, actor, op, path, to, bytes, outcome, durationMs } = event;
  const present = 5 + Number(sessionId !== undefined) + Number(path !== undefined) + Number(to !== undefined) + Number(bytes !== undefined);
  const actorText = actorJson(actor);
  if (
    actorText === undefined ||
    typeof at !== 'string' ||
    typeof op !== 'string' ||
    typeof outcome !== 'string' ||
    !Number.isFinite(durationMs) ||
    !optional(sessionId, 'string') ||
    !optional(path, 'string') ||
    !optional(to, 'string') ||
    !(bytes === undefined || Number.isFinite(bytes)) ||
    Object.keys(event).length !== present
  )
    return `${JSON.stringify(event)}\n`;
  let line = `{"at":${text(at)}`;
  if (sessionId !== undefined) line += `,"sessionId":${text(sessionId)}`;
  line += `,"actor":${actorText},"op":${text(op)}`;
  if (path !== undefined) line += `,"path":${text(path)}`;
  if (to !== undefined) line += `,"to":${text(to)}`;
  if (bytes !== undefined) line += `,"bytes":${bytes}`;
  return `${line},"outcome":${text(outcome)},"durationMs":${durationMs}}\n`;
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
