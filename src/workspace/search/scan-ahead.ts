import type { NormalizedPath } from '../paths.js';
import { Batch, IN_FLIGHT, linesJob, matchBatch, type ScanRequest } from './batch.js';
import type { LineMatch, MatchFile } from './match-worker.js';
import type { SearchEntry, SearchSource } from './source.js';

/**
 * Files matched while the walk still runs. The walk lists breadth first and grep answers in path order, so
 * without this every worker would idle until the last directory is listed. Files the workers can read in
 * a pinned directory are sent in walk order, at most {@link IN_FLIGHT} batches at once (the walk waits for
 * a worker: it runs at their pace); the files a batch matched completely keep their matches for the sorted
 * scan (`scanFiles`'s `known`), which matches only the rest. Once `maxMatches` are known nothing more is
 * sent: past that the sorted scan matches only what the answer needs.
 */
export class ScanAhead {
  readonly #source: SearchSource;
  readonly #job: ReturnType<typeof linesJob>;
  readonly #signal: AbortSignal;
  readonly #known = new Map<NormalizedPath, readonly LineMatch[]>();
  readonly #inFlight: Promise<void>[] = [];
  #batch = new Batch();
  #found = 0;

  constructor(source: SearchSource, request: ScanRequest, signal: AbortSignal) {
    this.#source = source;
    this.#job = linesJob(request);
    this.#signal = signal;
  }

  /** Takes a file the walk selected; a promise to wait for when every worker is busy. */
  add(entry: SearchEntry): Promise<void> | undefined {
    if (this.#found >= this.#job.maxMatches || !this.#batch.addPinned(this.#source, entry) || !this.#batch.full) return undefined;
    this.#send();
    return this.#inFlight.length >= IN_FLIGHT ? this.#inFlight.shift() : undefined;
  }

  /** Once the walk is done: the files matched completely, with their matches (the unsent rest is left to the sorted scan). */
  async finish(): Promise<ReadonlyMap<NormalizedPath, readonly LineMatch[]>> {
    this.#batch.release();
    await Promise.all(this.#inFlight.splice(0));
    return this.#known;
  }

  /** The walk failed: nothing more is sent (batches in flight release their pins when they settle). */
  abandon(): void {
    this.#batch.release();
    this.#inFlight.length = 0;
  }

  #send(): void {
    const sent = this.#batch;
    this.#batch = new Batch();
    const files = sent.files;
    const running = matchBatch({ ...this.#job, files }, this.#signal, sent.pack())
      .then((matches) => this.#keep(files, matches))
      .finally(() => sent.release());
    running.catch(() => undefined); // awaited by `add` or `finish`, unless the walk fails first
    this.#inFlight.push(running);
  }

  /**
   * A batch that stopped at `maxMatches` matched the files before its last match's file completely (that
   * one may be cut short, the later ones were not matched); any other batch matched all of its files.
   */
  #keep(files: readonly MatchFile[], matches: readonly LineMatch[]): void {
    const byPath = new Map<string, LineMatch[]>();
    for (const match of matches) {
      const list = byPath.get(match.path);
      if (list === undefined) byPath.set(match.path, [match]);
      else list.push(match);
    }
    const last = matches.at(-1);
    const complete =
      last !== undefined && matches.length >= this.#job.maxMatches ? files.findIndex((file) => file.path === last.path) : files.length;
    for (let index = 0; index < complete; index += 1) {
      const path = (files[index] as MatchFile).path;
      const found = byPath.get(path) ?? [];
      this.#known.set(path, found);
      this.#found += found.length;
    }
  }
}
