import * as fs from 'node:fs';
import { InvalidArgumentError } from '../workspace/errors.js';
import { recording, type AuditEvent, type AuditSink, type RecordFields } from './audit-event.js';
import { AuditRecords } from './audit-records.js';
import { afterDelivery, deliverQueued } from './audit-queue.js';
import { flushOnSignals } from './flush-on-signal.js';
import { JsonLines, plainActor } from './jsonl-lines.js';

export { jsonLine } from './jsonl-lines.js';

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
 * opened for appending; at process exit; when the audited workspace (or a session) is disposed; and on
 * SIGINT and SIGTERM (see `flush-on-signal.ts`). So a crash, even `kill -9`, leaves every line written
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
  const lines = new JsonLines();
  let scheduled = false;
  let failure: unknown;
  /** An event that could not be written as JSON: reported once, by the next event, which is still written. */
  let refused: unknown;

  // Events are serialised here, once per batch, straight into one buffer written with one call: nothing is
  // paid inside the operation that emitted them.
  const flush = (): void => {
    deliverQueued(); // what the audit recorded so far is written too
    scheduled = false;
    if (queued.length === 0 || fd === undefined) return;
    try {
      for (let index = 0; index < queued.length; index += 1) {
        const record = queued.view(index);
        if (record.event === undefined && plainActor(record.actor)) lines.record(record);
        else {
          try {
            lines.event(queued.event(index));
          } catch (error) {
            refused ??= error; // only a caller-built event can fail (JSON.stringify): it alone is left out
          }
        }
      }
      const bytes = lines.bytes;
      let written = 0;
      while (written < bytes.byteLength) written += fs.writeSync(fd, bytes, written);
    } catch (error) {
      failure ??= error;
    } finally {
      queued.clear();
      lines.reset();
    }
  };
  process.on('exit', flush);
  const stopFlushingOnSignals = flushOnSignals(flush);
  const close = (): void => {
    flush();
    if (fd !== undefined) fs.closeSync(fd);
    fd = undefined;
    process.off('exit', flush);
    stopFlushingOnSignals();
  };

  /** Before an event is queued: throws when the sink no longer works (failed, or closed). */
  const accepting = (): void => {
    if (failure !== undefined) throw failure;
    if (fd === undefined) throw new InvalidArgumentError(`the audit log ${file} was closed`);
  };
  /** After: the batch is due at the end of this turn, and an event refused since is reported. */
  const queuedOne = (): void => {
    if (!scheduled) {
      scheduled = true;
      afterDelivery(flush);
    }
    if (refused !== undefined) {
      const error = refused;
      refused = undefined;
      throw error;
    }
  };
  const sink = (event: AuditEvent): void => {
    deliverQueued(); // what the audit recorded before this comes first
    accepting();
    queued.pushEvent(event);
    queuedOne();
  };
  const push = queued.push;
  // Every operation of an audited workspace comes here: the checks above only when something is wrong.
  const record: RecordFields = (at, meta, path, bytes, durationMs) => {
    if (failure !== undefined || fd === undefined || refused !== undefined) accepting();
    push(at, meta, path, bytes, durationMs);
    if (!scheduled || refused !== undefined) queuedOne();
  };
  return Object.assign(recording(sink, record), { flush, close });
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
