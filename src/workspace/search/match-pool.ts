import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { InvalidArgumentError } from '../errors.js';
import {
  MATCH_WORKER_SOURCE,
  type LinesJob,
  type LinesResult,
  type PathsJob,
  type WorkerJob,
  type WorkerReply,
  type WorkerRequest,
} from './match-worker.js';

interface Pending {
  request: WorkerRequest;
  /** Buffers the request owns, moved to the worker rather than copied. */
  transfer: ArrayBuffer[];
  signal: AbortSignal;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
  onAbort: () => void;
}

interface Slot {
  worker: Worker;
  running: Pending | undefined;
}

/**
 * A small pool of match workers shared by every workspace in the process. A job whose signal aborts while
 * it runs gets its worker terminated (the only way to stop a regex mid-match) and a fresh one takes the
 * slot; a queued job is simply dropped. Idle workers are unref'd so they never keep a process alive.
 */
export class MatchPool {
  readonly #size: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  #nextId = 0;

  constructor(size: number) {
    this.#size = size;
  }

  /**
   * What one batch of files holds, rejected with `signal.reason` when it aborts first. Buffers in `transfer`
   * (the batch's own, which nobody else holds) are moved to the worker, not copied: the caller loses them.
   */
  matchLines(job: Omit<LinesJob, 'kind'>, signal: AbortSignal, transfer: ArrayBuffer[] = []): Promise<LinesResult> {
    return this.#run({ kind: 'lines', ...job }, signal, transfer) as Promise<LinesResult>;
  }

  /** The indices of the paths a compiled glob matches, rejected with `signal.reason` when it aborts first. */
  selectPaths(job: Omit<PathsJob, 'kind'>, signal: AbortSignal): Promise<number[]> {
    return this.#run({ kind: 'paths', ...job }, signal) as Promise<number[]>;
  }

  #run(job: WorkerJob, signal: AbortSignal, transfer: ArrayBuffer[] = []): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const request = { ...job, id: this.#nextId++ };
      const pending: Pending = { request, transfer, signal, resolve, reject, onAbort: () => this.#abort(pending) };
      signal.addEventListener('abort', pending.onAbort, { once: true });
      this.#queue.push(pending);
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const slot = this.#slots.find((candidate) => candidate.running === undefined) ?? this.#spawn();
      if (slot === undefined) return;
      const pending = this.#queue.shift() as Pending;
      slot.running = pending;
      slot.worker.ref();
      slot.worker.postMessage(pending.request, pending.transfer);
    }
  }

  #spawn(): Slot | undefined {
    if (this.#slots.length >= this.#size) return undefined;
    const slot: Slot = { worker: new Worker(MATCH_WORKER_SOURCE, { eval: true }), running: undefined };
    slot.worker.unref();
    slot.worker.on('message', (reply: WorkerReply) => this.#settle(slot, reply));
    slot.worker.on('error', (error) => this.#crash(slot, error));
    this.#slots.push(slot);
    return slot;
  }

  #settle(slot: Slot, reply: WorkerReply): void {
    const pending = slot.running;
    if (pending === undefined || pending.request.id !== reply.id) return;
    this.#release(slot, pending);
    if ('error' in reply) pending.reject(new InvalidArgumentError(`${describeJob(pending.request)} failed: ${reply.error}`));
    else pending.resolve(reply.result);
    this.#dispatch();
  }

  #release(slot: Slot, pending: Pending): void {
    slot.running = undefined;
    slot.worker.unref();
    pending.signal.removeEventListener('abort', pending.onAbort);
  }

  #abort(pending: Pending): void {
    const queued = this.#queue.indexOf(pending);
    if (queued !== -1) this.#queue.splice(queued, 1);
    const slot = this.#slots.find((candidate) => candidate.running === pending);
    if (slot !== undefined) this.#retire(slot);
    pending.reject(pending.signal.reason);
    this.#dispatch();
  }

  /** Stops a worker (mid-match if need be) and frees its place for a fresh one. */
  #retire(slot: Slot): void {
    const index = this.#slots.indexOf(slot);
    if (index === -1) return;
    this.#slots.splice(index, 1);
    const running = slot.running;
    if (running !== undefined) this.#release(slot, running);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate();
  }

  #crash(slot: Slot, error: Error): void {
    const pending = slot.running;
    this.#retire(slot);
    pending?.reject(new InvalidArgumentError(`${describeJob(pending.request)} could not run: ${error.message}`));
    this.#dispatch();
  }
}

function describeJob(job: WorkerJob): string {
  return job.kind === 'lines' ? `grep pattern ${JSON.stringify(job.pattern)}` : `glob pattern ${JSON.stringify(job.glob)}`;
}

/** The process-wide pool: at least two workers, so one runaway pattern never stalls every other search. */
export const matchPool = new MatchPool(Math.min(4, Math.max(2, availableParallelism() - 1)));
