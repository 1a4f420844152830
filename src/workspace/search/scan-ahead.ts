import { Batch, IN_FLIGHT, linesJob, matchBatch, type ScanRequest } from './batch.js';
import type { LineMatch } from './match-worker.js';
import type { SearchEntry, SearchSource } from './source.js';

/**
 * Files matched while the walk still runs. The walk lists breadth first and grep answers in path order, so
 * without this every worker would idle until the last directory is listed. Files the workers can read in
 * a pinned directory are sent in walk order, at most {@link IN_FLIGHT} batches at once (the walk waits for
 * a worker: it runs at their pace); the files a batch matched completely keep their matches in their entry
 * (`SearchEntry.matched`) for the sorted scan, which matches only the rest. Once `maxMatches` are known nothing more is
 * sent: past that the sorted scan matches only what the answer needs.
 */
export class ScanAhead {
  readonly #source: SearchSource;
  readonly #job: ReturnType<typeof linesJob>;
  readonly #signal: AbortSignal;
  readonly #inFlight: Promise<void>[] = [];
  #batch = new Batch();
  /** The entries of the batch being filled, in its order. */
  #entries: SearchEntry[] = [];
  #found = 0;

  constructor(source: SearchSource, request: ScanRequest, signal: AbortSignal) {
    this.#source = source;
    this.#job = linesJob(request);
    this.#signal = signal;
  }

  /** Takes a file the walk selected; a promise to wait for when every worker is busy. */
  add(entry: SearchEntry): Promise<void> | undefined {
    if (this.#found >= this.#job.maxMatches || !this.#batch.addPinned(this.#source, entry)) return undefined;
    this.#entries.push(entry);
    if (!this.#batch.full) return undefined;
    this.#send();
    return this.#inFlight.length >= IN_FLIGHT ? this.#inFlight.shift() : undefined;
  }

  /**
   * Once the walk is done: waits for the batches in flight. Each file they matched completely has its
   * matches in its entry's `matched`; the unsent rest is left to the sorted scan.
   */
  async finish(): Promise<void> {
    this.#batch.release();
    await Promise.all(this.#inFlight.splice(0));
  }

  /** The walk failed: nothing more is sent (batches in flight release their pins when they settle). */
  abandon(): void {
    this.#batch.release();
    this.#inFlight.length = 0;
  }

  #send(): void {
    const sent = this.#batch;
    const entries = this.#entries;
    this.#batch = new Batch();
    this.#entries = [];
    const files = sent.files;
    const running = matchBatch({ ...this.#job, files }, this.#signal, sent.pack())
      .then((matches) => this.#keep(entries, matches))
      .finally(() => sent.release());
    running.catch(() => undefined); // awaited by `add` or `finish`, unless the walk fails first
    this.#inFlight.push(running);
  }

  /**
   * A batch that stopped at `maxMatches` matched the files before its last match's file completely (that
   * one may be cut short, the later ones were not matched); any other batch matched all of its files.
   */
  #keep(entries: readonly SearchEntry[], matches: readonly LineMatch[]): void {
    let complete = entries.length;
    const last = matches.at(-1);
    if (last !== undefined && matches.length >= this.#job.maxMatches) complete = entries.findIndex((entry) => entry.path === last.path);
    let next = 0;
    for (let index = 0; index < complete; index += 1) {
      const entry = entries[index] as SearchEntry;
      if (matches[next]?.path !== entry.path) {
        entry.matched = NO_MATCHES;
        continue;
      }
      const start = next;
      while (matches[next]?.path === entry.path) next += 1;
      entry.matched = matches.slice(start, next);
      this.#found += next - start;
    }
  }
}

const NO_MATCHES: readonly LineMatch[] = Object.freeze([]);
