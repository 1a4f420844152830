import { isUtf8 } from 'node:buffer';
import { FileNotFoundError, IsADirectoryError, PathEscapeError } from '../errors.js';
import { displayPath, type NormalizedPath } from '../paths.js';
import { Batch, IN_FLIGHT, linesJob, matchBatch, type ScanRequest } from './batch.js';
import type { SearchDeadline } from './deadline.js';
import { mayHoldNeedle, type LineMatch } from './match-worker.js';
import type { SearchEntry, SearchSource } from './source.js';

export type { ScanRequest } from './batch.js';

/**
 * Matches `files` (sorted) in the worker pool, batch by batch, in order, and stops once `maxMatches` are
 * known. A file in a directory the source can pin is read by the worker itself; any other file is read
 * here, and skipped before it is sent when it cannot hold the needle. A file already `matched` (while the
 * walk ran, see `ScanAhead`) is not matched again: its matches take its place in the order; the files it
 * searched without a match were left out, `searchedBefore` of them, counted in the progress. The deadline
 * is checked between files, and the pool stops a batch mid-match when it passes.
 */
export async function scanFiles(
  source: SearchSource,
  files: readonly SearchEntry[],
  request: ScanRequest,
  deadline: SearchDeadline,
  searchedBefore = 0,
): Promise<LineMatch[]> {
  const job = linesJob(request);
  const { needle } = job;
  const results: LineMatch[] = [];
  const inFlight: Promise<readonly LineMatch[]>[] = [];
  let batch = new Batch();

  const send = (): void => {
    if (batch.files.length === 0) return;
    const sent = batch;
    batch = new Batch();
    const packed = sent.pack();
    const running = matchBatch(job, sent.files, sent.entries, deadline.signal, packed).finally(() => sent.release());
    // Settled later in order, or dropped once enough matches are known: never an unhandled rejection.
    running.catch(() => undefined);
    inFlight.push(running);
  };
  const collect = async (): Promise<boolean> => {
    results.push(...(await (inFlight.shift() as Promise<readonly LineMatch[]>)));
    return results.length >= request.maxMatches;
  };

  try {
    const done = deadline.progress.done + searchedBefore;
    deadline.progress.report({ phase: 'search', done, total: done + files.length });
    for (const file of files) {
      deadline.step('search', displayPath(file.path));
      const matched = file.matched;
      if (matched !== undefined) {
        if (batch.files.length === 0 && inFlight.length === 0) {
          results.push(...matched);
          if (results.length >= request.maxMatches) break;
          continue;
        }
        send();
        inFlight.push(Promise.resolve(matched));
      } else if (!batch.addPinned(source, file)) {
        const bytes = await readSearchable(source, file.path);
        if (bytes === undefined || (needle !== undefined && !mayHoldNeedle(bytes, needle, isUtf8))) continue;
        batch.addBytes(file, bytes);
      }
      if (matched === undefined && !batch.full) continue;
      send();
      if (inFlight.length >= IN_FLIGHT && (await collect())) return results.slice(0, request.maxMatches);
    }
    send();
    while (inFlight.length > 0 && results.length < request.maxMatches) if (await collect()) break;
    return results.slice(0, request.maxMatches);
  } finally {
    batch.release();
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
