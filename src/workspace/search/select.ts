import type { SearchEntry, SearchSource } from './source.js';
import { baseName, compareStrings, displayPath, joinPath, normalizePath, relativeTo, type NormalizedPath } from '../paths.js';
import type { SearchDeadline } from './deadline.js';
import type { ScanAhead } from './scan-ahead.js';
import { matchPool } from './match-pool.js';
import { compileGlob, globLiteralBase, globNameFilter, searchedByDefault, skipsDotDirectories } from './patterns.js';

/** Paths sent to a worker in one message. */
const PATHS_PER_BATCH = 4096;

/**
 * Files under `base` whose path relative to `base` matches `pattern`, sorted. Without a pattern every file
 * matches except those under dot segments, but a `base` that names a file always matches. The walk starts
 * at the pattern's literal prefix, so `src/**` never visits `node_modules/`. A glob's regex runs in the
 * worker pool while the walk goes on, so no glob can block the event loop either (picomatch's regex for
 * `**\/*a*a*a*a*a*a*b` backtracks for minutes on a long name of `a`s). Without a pattern, each selected
 * file is handed to `ahead` as the walk finds it (grep matches it meanwhile), and the files it searched
 * and found nothing in are left out (see `ScanAhead`): only the rest is sorted.
 */
export async function selectFiles(
  source: SearchSource,
  base: NormalizedPath,
  pattern: string | undefined,
  dot: boolean,
  deadline: SearchDeadline,
  ahead?: Pick<ScanAhead, 'take' | 'busy' | 'finish'>,
): Promise<SearchEntry[]> {
  const relativePattern = pattern?.replace(/^(?:\.?\/)+/, '');
  const compiled = relativePattern === undefined ? undefined : compileGlob(relativePattern, dot);
  const mayMatch = relativePattern === undefined ? undefined : globNameFilter(relativePattern);
  const found: SearchEntry[] = [];
  const selections: Promise<SearchEntry[]>[] = [];
  let entries: SearchEntry[] = [];
  let paths: string[] = [];
  const flush = (): void => {
    if (compiled === undefined || paths.length === 0) return;
    const sent = entries;
    const selection = matchPool
      .selectPaths({ ...compiled, paths }, deadline.signal)
      .then((indices) => indices.map((i) => sent[i] as SearchEntry));
    selection.catch(() => undefined); // awaited below, unless the walk fails first
    selections.push(selection);
    entries = [];
    paths = [];
  };

  const descend = skipsDotDirectories(relativePattern, dot) ? notDotDirectory : undefined;
  for await (const batch of source.walk(walkStart(base, relativePattern), descend)) {
    // Indexed, not `for...of`: an array iterator in this long-running async function allocates a result per entry.
    for (let index = 0; index < batch.length; index += 1) {
      const entry = batch[index] as SearchEntry;
      deadline.step('walk', displayPath(entry.path));
      if (!entry.isFile) continue;
      const tested = entry.path === base ? baseName(base) : relativeTo(entry.path, base);
      if (compiled === undefined) {
        if (entry.path !== base && !searchedByDefault(tested)) continue;
        if (ahead?.take(entry) !== true) found.push(entry);
        const busy = ahead?.busy();
        if (busy !== undefined) await busy;
        continue;
      }
      if (mayMatch !== undefined && !mayMatch(tested)) continue;
      entries.push(entry);
      paths.push(tested);
      if (paths.length >= PATHS_PER_BATCH) flush();
    }
  }
  flush();
  for (const selected of await Promise.all(selections)) found.push(...selected);
  const kept = ahead === undefined ? found : await ahead.finish(found);
  return kept.sort((a, b) => compareStrings(a.path, b.path));
}

/** Below the walk's start, where every name is a segment of the path tested. */
const notDotDirectory = (directory: NormalizedPath): boolean => !baseName(directory).startsWith('.');

/** Where a glob's walk may start: `base` joined with the pattern's literal directory prefix, when it is plain. */
function walkStart(base: NormalizedPath, pattern: string | undefined): NormalizedPath {
  const literalPrefix = pattern === undefined ? '' : globLiteralBase(pattern);
  if (literalPrefix === '' || literalPrefix.split('/').includes('..') || literalPrefix.includes('\\')) return base;
  try {
    return normalizePath(joinPath(base, literalPrefix));
  } catch {
    return base;
  }
}
