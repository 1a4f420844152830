import { InvalidArgumentError } from './errors.js';
import { baseName, joinPath, normalizePath, relativeTo, type NormalizedPath } from './paths.js';
import type { SearchDirectoryPin } from './driver.js';
import { SearchDeadline } from './search/deadline.js';
import { requiredLiteral } from './search/literal.js';
import { globLiteralBase, globMatcher, grepFlags, requirePattern } from './search/patterns.js';
import { scanFiles } from './search/scan.js';
import type { GlobMatch, GlobOptions, GrepMatch, GrepOptions } from './types.js';

/** One entry of the shared layer's walk: files include links to files inside the root. */
export interface SearchEntry {
  path: NormalizedPath;
  isFile: boolean;
  /** A link (to a file inside the root, when `isFile`): read through `readFile`, never by name in its directory. */
  isLink?: boolean;
}

/** What glob and grep need from a workspace: a walk below a base (the base itself when it is a file), and file bytes. */
export interface SearchSource {
  walk(base: NormalizedPath): AsyncIterable<SearchEntry>;
  readFile(path: NormalizedPath): Promise<Uint8Array>;
  /** The driver's `pinSearchDirectory`, when it has one: files of a pinned directory are read by the search workers. */
  pinDirectory?(path: NormalizedPath): SearchDirectoryPin | undefined;
}

/** `glob` over any workspace: the one entry point the shared layer calls. */
export async function globFiles(
  source: SearchSource,
  pattern: string,
  options: GlobOptions,
  defaultTimeoutMs: number,
): Promise<GlobMatch[]> {
  const checked = requirePattern(pattern, 'glob');
  const base = normalizePath(options.path ?? '.');
  const deadline = new SearchDeadline(options, defaultTimeoutMs, 'glob');
  const matches = await deadline.run((bounds) => matchFiles(source, base, checked, options.dot === true, bounds));
  return matches.map(({ path }) => ({ path, isFile: true as const }));
}

/** `grep` over any workspace: the one entry point the shared layer calls. */
export async function grepFiles(
  source: SearchSource,
  pattern: string,
  options: GrepOptions,
  defaultTimeoutMs: number,
): Promise<GrepMatch[]> {
  const checked = requirePattern(pattern, 'grep');
  const flags = grepFlags(checked, options.ignoreCase === true);
  const maxMatches = options.maxMatches ?? 1000;
  if (typeof maxMatches !== 'number' || !Number.isSafeInteger(maxMatches) || maxMatches < 0)
    throw new InvalidArgumentError(`maxMatches must be a non-negative whole number, got ${String(maxMatches)}`);
  const glob = options.glob === undefined ? undefined : requirePattern(options.glob, 'glob');
  const base = normalizePath(options.path ?? '.');
  const deadline = new SearchDeadline(options, defaultTimeoutMs, 'grep');
  if (maxMatches === 0) return deadline.run(async () => []);
  return deadline.run(async (bounds) => {
    const files = await matchFiles(source, base, glob, false, bounds);
    const needle = requiredLiteral(checked, options.ignoreCase === true);
    return scanFiles(source, files, { pattern: checked, flags, maxMatches, needle }, bounds);
  });
}

/**
 * Files under `base` whose path relative to `base` matches `pattern`, sorted. Without a pattern every file
 * matches except those under dot segments (as ripgrep skips hidden files), but a `base` that names a file
 * always matches. The walk starts at the pattern's literal prefix, so `src/**` never visits `node_modules/`.
 */
async function matchFiles(
  source: SearchSource,
  base: NormalizedPath,
  pattern: string | undefined,
  dot: boolean,
  deadline: SearchDeadline,
): Promise<SearchEntry[]> {
  const relativePattern = (pattern ?? '**').replace(/^(?:\.?\/)+/, '');
  const matcher = globMatcher(relativePattern, dot);
  const literalPrefix = globLiteralBase(relativePattern);
  let start = base;
  if (literalPrefix !== '' && !literalPrefix.split('/').includes('..') && !literalPrefix.includes('\\')) {
    try {
      start = normalizePath(joinPath(base, literalPrefix));
    } catch {
      start = base;
    }
  }
  const found: SearchEntry[] = [];
  for await (const entry of source.walk(start)) {
    deadline.check();
    if (!entry.isFile) continue;
    if (entry.path === base ? pattern === undefined || matcher(baseName(base)) : matcher(relativeTo(entry.path, base))) found.push(entry);
  }
  return found.sort((a, b) => compareStrings(a.path, b.path));
}

/** Code-unit order: deterministic, locale-free, the order results are promised in. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
