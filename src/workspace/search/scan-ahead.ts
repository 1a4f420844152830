import { aheadBatchFiles, Batch, IN_FLIGHT, linesJob, matchBatch, type ScanJob, type ScanRequest } from './batch.js';
import type { LineMatch } from './match-worker.js';
import type { SearchEntry, SearchSource } from './source.js';

/**
 * Files matched while the walk still runs. The walk lists breadth first and grep answers in path order, so
 * without this every worker would idle until the last directory is listed. Files the workers can read in
 * a pinned directory are sent in walk order, at most {@link IN_FLIGHT} batches at once (the walk waits for
 * a worker: it runs at their pace), in batches that grow as the walk goes (see `aheadBatchFiles`); the
 * files a batch matched completely keep their matches in their entry (`SearchEntry.matched`) for the sorted
 * scan, which matches only the rest. A file matched completely without a match is dropped (nothing of it
 * goes into the answer), so the scan neither sorts nor visits most of a tree. Once `maxMatches` are known
 * nothing more is taken: past that the sorted scan matches only what the answer needs.
 */
export class ScanAhead {
  readonly #source: SearchSource;
  readonly #job: ScanJob;
  readonly #signal: AbortSignal;
  readonly #inFlight: Promise<void>[] = [];
  #batch = new Batch();
  /** Files taken that the answer may need: some matched, or not matched to the end (cut at `maxMatches`). */
  readonly #kept: SearchEntry[] = [];
  #found = 0;
  /** Files sent to the workers so far: batches grow with it (see `aheadBatchFiles`). */
  #sent = 0;
  /** Files searched while the walk ran and found without a match (dropped: see `finish`). */
  searched = 0;

  constructor(source: SearchSource, request: ScanRequest, signal: AbortSignal) {
    this.#source = source;
    this.#job = linesJob(request);
    this.#signal = signal;
  }

  /**
   * Takes a file the walk selected, unless enough matches are known or no worker can read it: whether it
   * did (a file not taken is the caller's to scan).
   */
  take(entry: SearchEntry): boolean {
    if (this.#found >= this.#job.maxMatches || !this.#batch.addPinned(this.#source, entry)) return false;
    if (this.#batch.full) this.#send();
    return true;
  }

  /** A promise to wait for when every worker is busy, so the walk goes at their pace. */
  busy(): Promise<void> | undefined {
    return this.#inFlight.length >= IN_FLIGHT ? this.#inFlight.shift() : undefined;
  }

  /**
   * Once the walk is done: waits for the batches in flight, then adds to `found` (the files not taken) the
   * taken ones the answer may need: those matched completely with their matches in `matched`, the rest
   * (cut short or never sent) to be matched by the sorted scan. The files dropped are counted in `searched`.
   */
  async finish(found: SearchEntry[]): Promise<SearchEntry[]> {
    // The last batch goes too, so the workers match it alongside those in flight rather than after them.
    if (this.#batch.entries.length > 0 && this.#found < this.#job.maxMatches) this.#send();
    this.#batch.release();
    await Promise.all(this.#inFlight.splice(0));
    for (const entry of this.#batch.entries) found.push(entry);
    for (const entry of this.#kept) found.push(entry);
    return found;
  }

  /** The walk failed: nothing more is sent (batches in flight release their pins when they settle). */
  abandon(): void {
    this.#batch.release();
    this.#inFlight.length = 0;
  }

  #send(): void {
    const sent = this.#batch;
    const entries = sent.entries;
    this.#sent += entries.length;
    this.#batch = new Batch(aheadBatchFiles(this.#sent));
    const running = matchBatch(this.#job, sent.files, entries, this.#signal, sent.pack())
      .then((matches) => this.#keep(entries, matches))
      .finally(() => sent.release());
    running.catch(() => undefined); // awaited by `busy`'s caller or `finish`, unless the walk fails first
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
    for (let index = 0; index < entries.length; index += 1) {
      const entry = entries[index] as SearchEntry;
      if (index >= complete) {
        this.#kept.push(entry);
        continue;
      }
      if (matches[next]?.path !== entry.path) {
        this.searched += 1;
        continue;
      }
      const start = next;
      while (matches[next]?.path === entry.path) next += 1;
      entry.matched = matches.slice(start, next);
      this.#found += next - start;
      this.#kept.push(entry);
    }
  }
}
