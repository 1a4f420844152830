import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { readHostFiles, type ReadJob, type ReadOutcome } from './read-files.js';

/** What the reader worker runs: `readHostFiles` from its own source, its bytes moved (not copied) back. */
const READER_SOURCE = `const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const read = ${readHostFiles.toString()};
parentPort.on('message', ({ id, job }) => {
  let outcomes;
  try {
    outcomes = read(fs, job);
  } catch (error) {
    parentPort.postMessage({ id, failed: true });
    return;
  }
  parentPort.postMessage({ id, outcomes }, outcomes.flatMap((outcome) => (outcome.bytes === undefined ? [] : [outcome.bytes.buffer])));
});`;

type Reply = { id: number; outcomes: ReadOutcome[] } | { id: number; failed: true };

interface Pending {
  job: ReadJob;
  resolve: (outcomes: ReadOutcome[]) => void;
}

/**
 * Reads host files on a second thread, so that the system calls of the next files overlap the main
 * thread's work on the previous ones (a hydration's reads are most of its time, and `cp -r` has one thread).
 * One worker for the process, started on first use and unref'd when idle, so it never keeps a process
 * alive. Jobs run one after another in the order given. A job the worker cannot answer (it failed to start,
 * died, or threw) is read on the calling thread instead, by the same function: the outcome never depends on
 * which thread read.
 */
class HostFileReader {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;

  read(job: ReadJob): Promise<ReadOutcome[]> {
    return new Promise((resolve) => {
      let worker: Worker;
      try {
        worker = this.#worker ?? this.#spawn();
      } catch {
        resolve(readHostFiles(fs, job));
        return;
      }
      const id = this.#nextId++;
      this.#pending.set(id, { job, resolve });
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ id, job });
    });
  }

  #spawn(): Worker {
    const worker = new Worker(READER_SOURCE, { eval: true });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      pending.resolve('failed' in reply ? readHostFiles(fs, pending.job) : reply.outcomes);
    });
    const lost = (): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      worker.removeAllListeners('message');
      const pending = [...this.#pending.values()];
      this.#pending.clear();
      for (const { job, resolve } of pending) resolve(readHostFiles(fs, job));
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.#worker = worker;
    return worker;
  }
}

/** The process-wide reader. */
export const hostFileReader = new HostFileReader();
