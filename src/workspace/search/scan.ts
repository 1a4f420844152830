import { isUtf8 } from 'node:buffer';
import { decodeText } from '../../text/encoding.js';
import type { SearchDirectoryPin } from '../driver.js';
import { FileNotFoundError, IsADirectoryError, PathEscapeError } from '../errors.js';
import type { SearchEntry, SearchSource } from './source.js';
import { baseName, displayPath, parentPath, type NormalizedPath } from '../paths.js';
import type { SearchDeadline } from './deadline.js';
import { matchPool } from './match-pool.js';
import { mayHoldNeedle, type LineMatch, type LinesJob, type MatchFile } from './match-worker.js';

export interface ScanRequest {
  pattern: string;
  flags: string;
  maxMatches: number;
  /** A literal every match contains (see `requiredLiteral`). */
  needle: string | undefined;
  /** Further literals every match contains (see `requiredLiterals`), checked on the needle's lines. */
  alsoNeeded?: readonly string[];
}

/** A batch is sent to a worker once it holds this many bytes or files. */
const BATCH_BYTES = 1 << 20;
const BATCH_FILES = 256;
/** Batches in flight at once: enough to keep every worker busy while the main thread walks and reads. */
const IN_FLIGHT = 4;

/**
 * Matches `files` (sorted) in the worker pool, batch by batch, in order, and stops once `maxMatches` are
 * known. A file in a directory the source can pin is read by the worker itself; any other file is read
 * here, and skipped before it is sent when it cannot hold the needle. The deadline is checked between files,
 * and the pool stops a batch mid-match when it passes.
 */
export async function scanFiles(
  source: SearchSource,
  files: readonly SearchEntry[],
  request: ScanRequest,
  deadline: SearchDeadline,
): Promise<LineMatch[]> {
  const needle = request.needle === undefined ? undefined : Buffer.from(request.needle, 'utf8');
  const alsoNeeded = needle === undefined ? [] : (request.alsoNeeded ?? []).map((literal) => Buffer.from(literal, 'utf8'));
  const job = { pattern: request.pattern, flags: request.flags, maxMatches: request.maxMatches, needle, alsoNeeded };
  const results: LineMatch[] = [];
  const inFlight: Promise<LineMatch[]>[] = [];
  let batch = new Batch();

  const send = (): void => {
    if (batch.files.length === 0) return;
    const sent = batch;
    batch = new Batch();
    const packed = sent.pack();
    const running = matchBatch({ ...job, files: sent.files }, deadline.signal, packed).finally(() => sent.release());
    // Settled later in order, or dropped once enough matches are known: never an unhandled rejection.
    running.catch(() => undefined);
    inFlight.push(running);
  };
  const collect = async (): Promise<boolean> => {
    results.push(...(await (inFlight.shift() as Promise<LineMatch[]>)));
    return results.length >= request.maxMatches;
  };

  try {
    deadline.progress.report({ phase: 'search', done: 0, total: deadline.progress.done + files.length });
    for (const file of files) {
      deadline.step('search', displayPath(file.path));
      if (!batch.addPinned(source, file)) {
        const bytes = await readSearchable(source, file.path);
        if (bytes === undefined || (needle !== undefined && !mayHoldNeedle(bytes, needle, isUtf8))) continue;
        batch.addBytes(file.path, bytes);
      }
      if (!batch.full) continue;
      send();
      if (inFlight.length >= IN_FLIGHT && (await collect())) return results.slice(0, request.maxMatches);
    }
    send();
    while (inFlight.length > 0) if (await collect()) break;
    return results.slice(0, request.maxMatches);
  } finally {
    batch.release();
  }
}

/**
 * One batch through the pool; files the worker handed back undecoded are decoded here with the tools'
 * codec (the text `read_file` shows: BOM stripped, UTF-16 or the detected legacy encoding; binaries stay
 * skipped) and matched in a second job. The worker stopped at `maxMatches` after every file it handed
 * back, so merging both in file order and cutting at `maxMatches` is exact.
 */
async function matchBatch(job: Omit<LinesJob, 'kind'>, signal: AbortSignal, transfer: ArrayBuffer[]): Promise<LineMatch[]> {
  const first = await matchPool.matchLines(job, signal, transfer);
  const decoded: MatchFile[] = [];
  for (const { index, bytes } of first.undecoded) {
    const text = decodeText(bytes)?.text;
    if (text !== undefined) decoded.push({ path: (job.files[index] as MatchFile).path, text });
  }
  if (decoded.length === 0) return first.matches;
  const second = await matchPool.matchLines({ ...job, files: decoded }, signal);
  const order = new Map(job.files.map((file, index) => [file.path, index]));
  const rank = (match: LineMatch): number => order.get(match.path) ?? 0;
  const merged = [...first.matches, ...second.matches].sort((a, b) => rank(a) - rank(b) || a.lineNumber - b.lineNumber);
  return merged.slice(0, job.maxMatches);
}

/**
 * Files for one worker message, with the directory pins they need until the worker is done. Bytes read here
 * (the source's own, which must not change) are packed into one buffer of the batch's that moves to the
 * worker: one copy at memory speed, where cloning each file's bytes into the message cost several.
 */
class Batch {
  readonly files: MatchFile[] = [];
  readonly #read: { index: number; bytes: Uint8Array }[] = [];
  readonly #pins = new Map<NormalizedPath, SearchDirectoryPin | undefined>();
  #bytes = 0;

  get full(): boolean {
    return this.#bytes >= BATCH_BYTES || this.files.length >= BATCH_FILES;
  }

  /** Adds a file for the worker to read in its pinned directory; false when that is not possible. */
  addPinned(source: SearchSource, file: SearchEntry): boolean {
    if (file.isLink === true || source.pinDirectory === undefined) return false;
    const directory = parentPath(file.path);
    let pin = this.#pins.get(directory);
    if (!this.#pins.has(directory)) {
      pin = source.pinDirectory(directory);
      this.#pins.set(directory, pin);
    }
    if (pin === undefined) return false;
    this.files.push({ path: file.path, directory: pin.path, name: baseName(file.path) });
    return true;
  }

  addBytes(path: NormalizedPath, bytes: Uint8Array): void {
    this.#read.push({ index: this.files.length, bytes });
    this.files.push({ path, bytes });
    this.#bytes += bytes.byteLength;
  }

  /** Copies the bytes read into one buffer, each file's bytes a view of it; that buffer, to transfer. */
  pack(): ArrayBuffer[] {
    if (this.#read.length === 0) return [];
    const packed = new Uint8Array(this.#bytes);
    let offset = 0;
    for (const { index, bytes } of this.#read) {
      packed.set(bytes, offset);
      this.files[index] = { path: (this.files[index] as MatchFile).path, bytes: packed.subarray(offset, offset + bytes.byteLength) };
      offset += bytes.byteLength;
    }
    this.#read.length = 0;
    return [packed.buffer];
  }

  release(): void {
    for (const pin of this.#pins.values()) pin?.release();
    this.#pins.clear();
  }
}

/** A file's bytes; undefined when it was removed or swapped for a link during the walk (not searched). */
async function readSearchable(source: SearchSource, file: NormalizedPath): Promise<Uint8Array | undefined> {
  try {
    return await source.readFile(file);
  } catch (error) {
    if (error instanceof FileNotFoundError || error instanceof IsADirectoryError || error instanceof PathEscapeError) return undefined;
    throw error;
  }
}
