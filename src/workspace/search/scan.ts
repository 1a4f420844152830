import { FileNotFoundError, IsADirectoryError, PathEscapeError } from '../errors.js';
import type { NormalizedPath } from '../paths.js';
import type { SearchDeadline } from './deadline.js';
import { matchPool } from './match-pool.js';
import type { LineMatch } from './match-worker.js';

export interface ScanRequest {
  pattern: string;
  flags: string;
  maxMatches: number;
}

/** A batch is sent to a worker once it holds this many bytes or files. */
const BATCH_BYTES = 1 << 20;
const BATCH_FILES = 256;
/** Batches in flight at once: enough to keep every worker busy while the main thread reads. */
const IN_FLIGHT = 4;

/**
 * Reads `files` (in order) on the main thread and matches them in the worker pool, batch by batch, in
 * order; stops reading once `maxMatches` are known. The deadline is checked between files, and the pool
 * stops a batch mid-match when it passes.
 */
export async function scanFiles(
  readFile: (path: NormalizedPath) => Promise<Uint8Array>,
  files: readonly NormalizedPath[],
  request: ScanRequest,
  deadline: SearchDeadline,
): Promise<LineMatch[]> {
  const results: LineMatch[] = [];
  const inFlight: Promise<LineMatch[]>[] = [];
  let batch: { path: string; bytes: Uint8Array }[] = [];
  let batchBytes = 0;

  const send = (): void => {
    if (batch.length === 0) return;
    const running = matchPool.run({ ...request, files: batch }, deadline.signal);
    // Settled later in order, or dropped once enough matches are known: never an unhandled rejection.
    running.catch(() => undefined);
    inFlight.push(running);
    batch = [];
    batchBytes = 0;
  };
  const collect = async (): Promise<boolean> => {
    results.push(...(await (inFlight.shift() as Promise<LineMatch[]>)));
    return results.length >= request.maxMatches;
  };

  for (const file of files) {
    deadline.check();
    const bytes = await readSearchable(readFile, file);
    if (bytes === undefined) continue;
    batch.push({ path: file, bytes });
    batchBytes += bytes.byteLength;
    if (batchBytes < BATCH_BYTES && batch.length < BATCH_FILES) continue;
    send();
    if (inFlight.length >= IN_FLIGHT && (await collect())) return results.slice(0, request.maxMatches);
  }
  send();
  while (inFlight.length > 0) if (await collect()) break;
  return results.slice(0, request.maxMatches);
}

/** A file's bytes; undefined when it was removed or swapped for a link during the walk (not searched). */
async function readSearchable(
  readFile: (path: NormalizedPath) => Promise<Uint8Array>,
  file: NormalizedPath,
): Promise<Uint8Array | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if (error instanceof FileNotFoundError || error instanceof IsADirectoryError || error instanceof PathEscapeError) return undefined;
    throw error;
  }
}
