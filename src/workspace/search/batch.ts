import { decodeText } from '../../text/encoding.js';
import type { SearchDirectoryPin } from '../driver.js';
import { baseName, parentPath, type NormalizedPath } from '../paths.js';
import { matchPool } from './match-pool.js';
import type { LineMatch, LinesJob, MatchFile } from './match-worker.js';
import type { SearchEntry, SearchSource } from './source.js';

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
export const IN_FLIGHT = 4;

/** The worker job of a scan, less its files: the literals as UTF-8 bytes. */
export function linesJob(request: ScanRequest): Omit<LinesJob, 'kind' | 'files'> & { needle: Buffer | undefined } {
  const needle = request.needle === undefined ? undefined : Buffer.from(request.needle, 'utf8');
  const alsoNeeded = needle === undefined ? [] : (request.alsoNeeded ?? []).map((literal) => Buffer.from(literal, 'utf8'));
  return { pattern: request.pattern, flags: request.flags, maxMatches: request.maxMatches, needle, alsoNeeded };
}

/**
 * One batch through the pool; files the worker handed back undecoded are decoded here with the tools'
 * codec (the text `read_file` shows: BOM stripped, UTF-16 or the detected legacy encoding; binaries stay
 * skipped) and matched in a second job. The worker stopped at `maxMatches` after every file it handed
 * back, so merging both in file order and cutting at `maxMatches` is exact.
 */
export async function matchBatch(job: Omit<LinesJob, 'kind'>, signal: AbortSignal, transfer: ArrayBuffer[]): Promise<LineMatch[]> {
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
export class Batch {
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
