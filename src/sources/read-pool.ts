import * as fs from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { readHostFiles, type ReadBatch, type ReadJob } from './read-files.js';

/**
 * What the reader worker runs: `readHostFiles` from its own source, its batch moved (not copied) back: a
 * few buffers per job, each the worker's fresh memory that nothing else refers to.
 */
const READER_SOURCE = `const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const read = ${readHostFiles.toString()};
parentPort.on('message', ({ id, job }) => {
  let batch;
  try {
    batch = read(fs, job);
  } catch (error) {
    parentPort.postMessage({ id, failed: true });
    return;
  }
  parentPort.postMessage({ id, batch }, [...batch.buffers, batch.table.buffer]);
});`;

type Reply = { id: number; batch: ReadBatch } | { id: number; failed: true };

interface Pending {
  job: ReadJob;
  resolve: (batch: ReadBatch) => void;
  reject: (error: unknown) => void;
}

/** Reads `pending`'s job on this thread: a job no worker answered. */
function readHere({ job, resolve, reject }: Pending): void {
  try {
    resolve(readHostFiles(fs, job));
  } catch (error) {
    reject(error);
  }
}

interface Reader {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * Reads host files on other threads, so that the system calls of the next files overlap the main thread's
 * work on the previous ones (a hydration's reads are most of its time, and `cp -r` has one thread). A few
 * workers for the process, started on first use and unref'd when idle, so they never keep a process alive;
 * a job goes to the one with the fewest jobs waiting. A job a worker cannot answer (it failed to start,
 * died, or threw) is read on the calling thread instead, by the same function: the outcome never depends on
 * which thread read.
 */
export class HostFileReader {
  readonly #size: number;
  readonly #readers: Reader[] = [];
  #nextId = 0;

  constructor(size: number) {
    this.#size = size;
  }

  read(job: ReadJob): Promise<ReadBatch> {
    return new Promise((resolve, reject) => {
      let reader: Reader;
      try {
        reader = this.#pick();
      } catch {
        readHere({ job, resolve, reject });
        return;
      }
      const id = this.#nextId++;
      reader.pending.set(id, { job, resolve, reject });
      if (reader.pending.size === 1) reader.worker.ref();
      reader.worker.postMessage({ id, job });
    });
  }

  #pick(): Reader {
    const idlest = this.#readers.reduce<Reader | undefined>(
      (best, reader) => (best === undefined || reader.pending.size < best.pending.size ? reader : best),
      undefined,
    );
    if (idlest !== undefined && (idlest.pending.size === 0 || this.#readers.length >= this.#size)) return idlest;
    return this.#spawn();
  }

  #spawn(): Reader {
    const reader: Reader = { worker: new Worker(READER_SOURCE, { eval: true }), pending: new Map() };
    const { worker, pending } = reader;
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiting = pending.get(reply.id);
      if (waiting === undefined) return;
      pending.delete(reply.id);
      if (pending.size === 0) worker.unref();
      if ('failed' in reply) readHere(waiting);
      else waiting.resolve(reply.batch);
    });
    const lost = (): void => {
      const index = this.#readers.indexOf(reader);
      if (index === -1) return;
      this.#readers.splice(index, 1);
      worker.removeAllListeners('message');
      const stranded = [...pending.values()];
      pending.clear();
      for (const waiting of stranded) readHere(waiting);
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.#readers.push(reader);
    return reader;
  }
}

/**
 * The process-wide reader: two workers where there are two cores or more. Reading is mostly waiting on
 * system calls, so two readers beside the main thread keep the main thread fed even on two cores.
 */
export const hostFileReader = new HostFileReader(Math.min(2, availableParallelism()));
