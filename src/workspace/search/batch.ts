import { decodeText } from '../../text/encoding.js';
import type { SearchDirectoryPin } from '../driver.js';
import type { NormalizedPath } from '../paths.js';
import { matchPool } from './match-pool.js';
import type { FileMatch, LineMatch, LinesJob, MatchFile } from './match-worker.js';
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
/** The most files a batch of the scan ahead grows to (see {@link aheadBatchFiles}). */
const AHEAD_BATCH_FILES = 1024;
/** Batches in flight at once: enough to keep every worker busy while the main thread walks and reads. */
export const IN_FLIGHT = 4;

/**
 * Files a batch of the scan ahead holds once `sent` files went to the workers: {@link BATCH_FILES} at
 * first, then a 32nd of those sent, up to {@link AHEAD_BATCH_FILES}. Each batch costs the main thread a
 * message out and one back, which on a big tree cost more than the files' own share; growing with the walk
 * keeps the files in flight when `maxMatches` is reached (matched for nothing) within an 8th of those sent.
 */
export function aheadBatchFiles(sent: number): number {
  return Math.min(AHEAD_BATCH_FILES, Math.max(BATCH_FILES, sent >> 5));
}

/** The worker job of a scan, less its files: the literals as UTF-8 bytes. */
export type ScanJob = Omit<LinesJob, 'kind' | 'files'> & { needle: Buffer | undefined };

export function linesJob(request: ScanRequest): ScanJob {
  const needle = request.needle === undefined ? undefined : Buffer.from(request.needle, 'utf8');
  const alsoNeeded = needle === undefined ? [] : (request.alsoNeeded ?? []).map((literal) => Buffer.from(literal, 'utf8'));
  return { pattern: request.pattern, flags: request.flags, maxMatches: request.maxMatches, needle, alsoNeeded };
}

/**
 * One batch through the pool, its matches named by `entries` (the batch's files, in order);
 * files the worker handed back undecoded are decoded here with the tools' codec (the text `read_file` shows:
 * BOM stripped, UTF-16 or the detected legacy encoding; binaries stay skipped) and matched in a second job.
 * The worker stopped at `maxMatches` after every file it handed back, so merging both in file order and
 * cutting at `maxMatches` is exact.
 */
export async function matchBatch(
  job: ScanJob,
  files: MatchFile[],
  entries: readonly SearchEntry[],
  signal: AbortSignal,
  transfer: ArrayBuffer[],
): Promise<LineMatch[]> {
  const first = await matchPool.matchLines({ ...job, files }, signal, transfer);
  const decoded: MatchFile[] = [];
  const ranks: number[] = [];
  for (const { index, bytes } of first.undecoded) {
    const text = decodeText(bytes)?.text;
    if (text === undefined) continue;
    decoded.push({ text });
    ranks.push(index);
  }
  const named = (matches: readonly FileMatch[], names: readonly SearchEntry[]): LineMatch[] =>
    matches.map(({ file, lineNumber, lineContent, matchStart, matchEnd }) => ({
      path: (names[file] as SearchEntry).path,
      lineNumber,
      lineContent,
      matchStart,
      matchEnd,
    }));
  if (decoded.length === 0) return named(first.matches, entries);
  const second = await matchPool.matchLines({ ...job, files: decoded }, signal);
  const merged = [
    ...first.matches.map((match) => ({ rank: match.file, match })),
    ...second.matches.map((match) => ({ rank: ranks[match.file] as number, match: { ...match, file: ranks[match.file] as number } })),
  ].sort((a, b) => a.rank - b.rank || a.match.lineNumber - b.match.lineNumber);
  return named(
    merged.slice(0, job.maxMatches).map(({ match }) => match),
    entries,
  );
}

/**
 * Files for one worker message, with the directory pins they need until the worker is done. Bytes read here
 * (the source's own, which must not change) are packed into one buffer of the batch's that moves to the
 * worker: one copy at memory speed, where cloning each file's bytes into the message cost several.
 */
export class Batch {
  readonly files: MatchFile[] = [];
  /** The entry of each file, in order (its workspace path names the file's matches). */
  readonly entries: SearchEntry[] = [];
  readonly #read: { index: number; bytes: Uint8Array }[] = [];
  readonly #pins = new Map<NormalizedPath, SearchDirectoryPin | undefined>();
  /** The directory of the last file added and its pin: files come a directory at a time. */
  #lastDirectory: NormalizedPath | undefined;
  #lastPin: SearchDirectoryPin | undefined;
  readonly #maxFiles: number;
  #bytes = 0;

  constructor(maxFiles = BATCH_FILES) {
    this.#maxFiles = maxFiles;
  }

  get full(): boolean {
    return this.#bytes >= BATCH_BYTES || this.files.length >= this.#maxFiles;
  }

  /** Adds a file for the worker to read in its pinned directory; false when that is not possible. */
  addPinned(source: SearchSource, file: SearchEntry): boolean {
    if (file.isLink === true || source.pinDirectory === undefined) return false;
    const path = file.path;
    const slash = path.lastIndexOf('/');
    // Files come a directory at a time: the same directory is recognised in place, without cutting it out.
    const last = this.#lastDirectory;
    const same = last !== undefined && (slash === -1 ? last === '' : slash === last.length && path.startsWith(last));
    const pin = same ? this.#lastPin : this.#pin(source, slash === -1 ? '' : path.slice(0, slash));
    if (pin === undefined) return false;
    this.files.push(slash === -1 ? `${pin.path}/${path}` : pin.path + path.slice(slash));
    this.entries.push(file);
    return true;
  }

  addBytes(file: SearchEntry, bytes: Uint8Array): void {
    this.#read.push({ index: this.files.length, bytes });
    this.files.push(bytes);
    this.entries.push(file);
    this.#bytes += bytes.byteLength;
  }

  /** Copies the bytes read into one buffer, each file's bytes a view of it; that buffer, to transfer. */
  pack(): ArrayBuffer[] {
    if (this.#read.length === 0) return [];
    const packed = new Uint8Array(this.#bytes);
    let offset = 0;
    for (const { index, bytes } of this.#read) {
      packed.set(bytes, offset);
      this.files[index] = packed.subarray(offset, offset + bytes.byteLength);
      offset += bytes.byteLength;
    }
    this.#read.length = 0;
    return [packed.buffer];
  }

  release(): void {
    for (const pin of this.#pins.values()) pin?.release();
    this.#pins.clear();
    this.#lastDirectory = undefined;
    this.#lastPin = undefined;
  }

  #pin(source: SearchSource, directory: NormalizedPath): SearchDirectoryPin | undefined {
    let pin = this.#pins.get(directory);
    if (!this.#pins.has(directory)) {
      pin = source.pinDirectory?.(directory);
      this.#pins.set(directory, pin);
    }
    this.#lastDirectory = directory;
    this.#lastPin = pin;
    return pin;
  }
}
