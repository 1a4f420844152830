import * as fs from 'node:fs';
import { batchBytes, outcomeOf, readHostFiles, type ReadBatch, type ReadJob, type ReadOutcome } from './read-files.js';
import { hostFileReader } from './read-pool.js';

/** Files per read job, and the bytes after which a job stops early (the rest is asked for again). */
export const JOB_FILES = 128;
const JOB_BYTES = 4 * 1024 * 1024;
/** Fewer files than this are read on the calling thread (a second thread is not worth its messages). */
const THREADED_FROM = 2 * JOB_FILES;
/**
 * The window: jobs are asked for while the bytes read and not yet taken stay under this many, at most
 * {@link UNANSWERED_MOST} of them unanswered. It is counted in bytes, not jobs: a job slow to answer (one
 * large file) then holds up nobody but the caller, the other reader going on with the jobs after it.
 */
export const WINDOW_BYTES = 64 * 1024 * 1024;
/** Jobs asked for and not yet answered (two for each reader, and as many queued behind them). */
export const UNANSWERED_MOST = 8;

interface Job {
  start: number;
  end: number;
  /** Undefined until asked for: the rest of a job that stopped for its bytes waits for room in the window. */
  batch?: Promise<ReadBatch>;
  /** The bytes its batch holds, once answered. */
  bytes: number;
}

/**
 * The planned files' outcomes, in order, read ahead of the caller: a large run is read on the reader
 * threads (`read-pool.ts`), a few jobs at a time, so that its system calls overlap what the caller does with
 * the files before; a small one on the calling thread. Jobs (each at most `JOB_FILES` files, stopping once
 * past `JOB_BYTES`) are asked for while the window has room, so the bytes held stay bounded whatever the
 * size of the tree: `WINDOW_BYTES` read and not taken, plus what `UNANSWERED_MOST` unanswered jobs bring.
 * A job is asked for when one is taken and when one is answered, so readers never wait for the caller while
 * there is room.
 *
 * A list still `growing` (the walk appends to it, calling `grew`) is read ahead the same way, in whole jobs
 * only, once it is large enough for the threads. `complete` says the list is final; `abandon` stops all
 * asking (what was read is dropped).
 */
export class ReadAhead {
  readonly #paths: readonly string[];
  readonly #job: Omit<ReadJob, 'paths'>;
  readonly #read: ((job: ReadJob) => Promise<ReadBatch>) | undefined;
  readonly #jobs: Job[] = [];
  #growing: boolean;
  #abandoned = false;
  #asked = 0;
  #unanswered = 0;
  #heldBytes = 0;
  #current: ReadBatch = { buffers: [], table: new Float64Array(0), count: 0, skips: [] };
  #taken = 0;

  /**
   * `read`: who reads a job; by default the reader threads for a large run, the calling thread for a small
   * one. `growing`: the caller still appends to `paths`.
   */
  constructor(
    paths: readonly string[],
    job: Omit<ReadJob, 'paths' | 'maxJobBytes'>,
    read?: (job: ReadJob) => Promise<ReadBatch>,
    { growing = false }: { growing?: boolean } = {},
  ) {
    this.#paths = paths;
    this.#job = { ...job, maxJobBytes: JOB_BYTES };
    this.#read = read;
    this.#growing = growing;
  }

  /** `paths` grew: asks for the whole jobs the window has room for. */
  grew(): void {
    if (this.#growing) this.#fill();
  }

  /** `paths` is final. */
  complete(): void {
    this.#growing = false;
  }

  /** Nothing more is asked for; what was read is dropped. */
  abandon(): void {
    this.#abandoned = true;
    this.#jobs.length = 0;
  }

  /** The next file's outcome (call it once per path given): at once when it has been read already. */
  next(): ReadOutcome | Promise<ReadOutcome> {
    if (this.#taken === this.#current.count) return this.#advance().then(() => this.#take());
    return this.#take();
  }

  #take(): ReadOutcome {
    const outcome = outcomeOf(this.#current, this.#taken);
    this.#taken += 1;
    return outcome;
  }

  async #advance(): Promise<void> {
    this.#fill();
    const job = this.#jobs.shift() as Job;
    const batch = await (job.batch ?? this.#ask(job));
    this.#heldBytes -= job.bytes;
    this.#current = batch;
    this.#taken = 0;
    this.#fill();
  }

  /** Asks for what the window has room for: first the rest of jobs that stopped for their bytes, in order, then new jobs. */
  #fill(): void {
    if (this.#abandoned || (this.#growing && this.#paths.length < THREADED_FROM)) return;
    const room = (): boolean => this.#unanswered < UNANSWERED_MOST && this.#heldBytes < WINDOW_BYTES;
    for (const job of this.#jobs) {
      if (!room()) return;
      if (job.batch === undefined) void this.#ask(job);
    }
    while (room() && this.#asked < this.#paths.length) {
      const end = this.#asked + JOB_FILES;
      if (this.#growing && end > this.#paths.length) return; // whole jobs only while the list grows
      const job: Job = { start: this.#asked, end: Math.min(end, this.#paths.length), bytes: 0 };
      this.#asked = job.end;
      this.#jobs.push(job);
      void this.#ask(job);
    }
  }

  /**
   * Asks a reader for `job`. A job that stopped for its bytes leaves the rest of its files to a job right
   * after it, asked for when the window has room.
   */
  #ask(job: Job): Promise<ReadBatch> {
    const request = { ...this.#job, paths: this.#paths.slice(job.start, job.end) };
    const batch = this.#read !== undefined ? this.#read(request) : this.#readDefault(request);
    job.batch = batch;
    this.#unanswered += 1;
    // Also what keeps a job nobody takes any more (abandoned, or the copy failed) from an unhandled rejection.
    batch.then(
      (answered) => {
        this.#unanswered -= 1;
        if (this.#abandoned) return;
        job.bytes = batchBytes(answered);
        this.#heldBytes += job.bytes;
        if (answered.count < job.end - job.start) {
          // Before the jobs asked for after it; first of all when the caller already waits for this one.
          const rest: Job = { start: job.start + answered.count, end: job.end, bytes: 0 };
          this.#jobs.splice(this.#jobs.indexOf(job) + 1, 0, rest);
        }
        this.#fill();
      },
      () => {
        this.#unanswered -= 1;
      },
    );
    return batch;
  }

  #readDefault(request: ReadJob): Promise<ReadBatch> {
    if (this.#growing || this.#paths.length >= THREADED_FROM) return hostFileReader.read(request);
    return (async () => readHostFiles(fs, request))();
  }
}
