import * as fs from 'node:fs';
import { readHostFiles, type ReadJob, type ReadOutcome } from './read-files.js';
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

interface Job {
  start: number;
  end: number;
  outcomes: Promise<ReadOutcome[]>;
}

/**
 * The planned files' outcomes, in order, read ahead of the caller: a large run is read on the reader
 * thread (`read-pool.ts`), a few jobs at a time, so that its system calls overlap what the caller does with
 * the files before; a small one on the calling thread. Besides the job being taken, at most `JOBS_AHEAD`
 * jobs (each at most `JOB_FILES` files, stopping once past `JOB_BYTES`) are asked for, so the bytes held
 * stay bounded whatever the size of the tree.
 */
export class ReadAhead {
  readonly #paths: readonly string[];
  readonly #job: Omit<ReadJob, 'paths'>;
  readonly #read: (job: ReadJob) => Promise<ReadOutcome[]>;
  readonly #jobs: Job[] = [];
  #asked = 0;
  #current: ReadOutcome[] = [];
  #taken = 0;

  /** `read`: who reads a job; by default the reader threads for a large run, the calling thread for a small one. */
  constructor(
    paths: readonly string[],
    job: Omit<ReadJob, 'paths' | 'maxJobBytes'>,
    read: (job: ReadJob) => Promise<ReadOutcome[]> = paths.length >= THREADED_FROM
      ? (request) => hostFileReader.read(request)
      : async (request) => readHostFiles(fs, request),
  ) {
    this.#paths = paths;
    this.#job = { ...job, maxJobBytes: JOB_BYTES };
    this.#read = read;
  }

  /** The next file's outcome (call it once per path given): at once when it has been read already. */
  next(): ReadOutcome | Promise<ReadOutcome> {
    if (this.#taken === this.#current.length) return this.#advance().then(() => this.#take());
    return this.#take();
  }

  #take(): ReadOutcome {
    const outcome = this.#current[this.#taken] as ReadOutcome;
    this.#taken += 1;
    return outcome;
  }

  async #advance(): Promise<void> {
    this.#fill();
    const job = this.#jobs.shift() as Job;
    const outcomes = await job.outcomes;
    // Stopped early for its bytes: the rest of its files come next, before the jobs asked for after it.
    if (outcomes.length < job.end - job.start) this.#jobs.unshift(this.#ask(job.start + outcomes.length, job.end));
    this.#current = outcomes;
    this.#taken = 0;
    this.#fill();
  }

  #fill(): void {
    while (this.#jobs.length < JOBS_AHEAD && this.#asked < this.#paths.length) {
      const end = Math.min(this.#asked + JOB_FILES, this.#paths.length);
      this.#jobs.push(this.#ask(this.#asked, end));
      this.#asked = end;
    }
  }

  #ask(start: number, end: number): Job {
    return { start, end, outcomes: this.#read({ ...this.#job, paths: this.#paths.slice(start, end) }) };
  }
}
