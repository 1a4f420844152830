import * as fs from 'node:fs';
import { batchBytes, outcomeOf, readHostFiles, type ReadBatch, type ReadJob, type ReadOutcome } from './read-files.js';
import { hostFileReader } from './read-pool.js';

/** Files per read job, and the bytes after which a job stops early (the rest is asked for again). */
export const JOB_FILES = 128;
const JOB_BYTES = 4 * 1024 * 1024;
/**
 * Jobs asked for beyond the one being taken (two for each reader): what bounds the bytes read and not yet
 * taken, about `(JOBS_AHEAD + 1) * JOB_BYTES` plus one file.
 */
export const JOBS_AHEAD = 4;
/** Fewer files than this are read on the calling thread (a second thread is not worth its messages). */
const THREADED_FROM = 2 * JOB_FILES;
/**
 * While the list still grows (the plan is being walked) nothing is taken, so the window is counted in
 * bytes: jobs are asked for until this many bytes are read and not taken, at most `GROWING_UNANSWERED` unanswered.
 */
export const GROWING_BYTES = 64 * 1024 * 1024;
/** Jobs asked for and not yet answered while the list grows: the answers are only seen when the walk yields. */
const GROWING_UNANSWERED = 2 * JOBS_AHEAD;

interface Job {
  start: number;
  end: number;
  batch: Promise<ReadBatch>;
  /** The bytes its batch holds, once answered. */
  bytes: number;
}

/**
 * The planned files' outcomes, in order, read ahead of the caller: a large run is read on the reader
 * thread (`read-pool.ts`), a few jobs at a time, so that its system calls overlap what the caller does with
 * the files before; a small one on the calling thread. Besides the job being taken, at most `JOBS_AHEAD`
 * jobs (each at most `JOB_FILES` files, stopping once past `JOB_BYTES`) are asked for, so the bytes held
 * stay bounded whatever the size of the tree.
 *
 * A list still `growing` (the walk appends to it, calling `grew`) is read ahead before anything is taken,
 * whole jobs only, and only once it is large enough for the threads: up to `GROWING_BYTES` read and not
 * taken (plus what `GROWING_UNANSWERED` unanswered jobs bring). `complete` says the list is final; `abandon` stops
 * all asking (what was read is dropped).
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
    if (!this.#growing || this.#abandoned || this.#paths.length < THREADED_FROM) return;
    while (this.#unanswered < GROWING_UNANSWERED && this.#heldBytes < GROWING_BYTES && this.#asked + JOB_FILES <= this.#paths.length) {
      this.#jobs.push(this.#ask(this.#asked, this.#asked + JOB_FILES));
      this.#asked += JOB_FILES;
    }
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
    const batch = await job.batch;
    this.#heldBytes -= job.bytes;
    // Stopped early for its bytes: the rest of its files come next, before the jobs asked for after it.
    if (batch.count < job.end - job.start) this.#jobs.unshift(this.#ask(job.start + batch.count, job.end));
    this.#current = batch;
    this.#taken = 0;
    this.#fill();
  }

  #fill(): void {
    while (!this.#abandoned && this.#jobs.length < JOBS_AHEAD && this.#asked < this.#paths.length) {
      const end = Math.min(this.#asked + JOB_FILES, this.#paths.length);
      this.#jobs.push(this.#ask(this.#asked, end));
      this.#asked = end;
    }
  }

  #ask(start: number, end: number): Job {
    const paths = this.#paths.slice(start, end);
    const request = { ...this.#job, paths };
    const batch = this.#read !== undefined ? this.#read(request) : this.#readDefault(request);
    const job: Job = { start, end, batch, bytes: 0 };
    this.#unanswered += 1;
    // Also what keeps a job nobody takes any more (abandoned, or the copy failed) from an unhandled rejection.
    batch.then(
      (answered) => {
        this.#unanswered -= 1;
        if (this.#abandoned) return;
        job.bytes = batchBytes(answered);
        this.#heldBytes += job.bytes;
        this.grew();
      },
      () => {
        this.#unanswered -= 1;
      },
    );
    return job;
  }

  #readDefault(request: ReadJob): Promise<ReadBatch> {
    if (this.#growing || this.#paths.length >= THREADED_FROM) return hostFileReader.read(request);
    return (async () => readHostFiles(fs, request))();
  }
}
