import picomatch from 'picomatch';
import { FileNotFoundError, InvalidArgumentError, IsADirectoryError, PathEscapeError } from './errors.js';
import { baseName, joinPath, normalizePath, relativeTo, type NormalizedPath } from './paths.js';
import { decodeUtf8, splitLines } from './text.js';
import type { GlobMatch, GlobOptions, GrepMatch, GrepOptions } from './types.js';

/** One entry of the shared layer's walk: files include links to files inside the root. */
export interface SearchEntry {
  path: NormalizedPath;
  isFile: boolean;
}

/** What glob and grep need from a workspace: a walk below a base (the base itself when it is a file), and file bytes. */
export interface SearchSource {
  walk(base: NormalizedPath): AsyncIterable<SearchEntry>;
  readFile(path: NormalizedPath): Promise<Uint8Array>;
}

/** `glob` over any workspace: the one entry point the shared layer calls. */
export async function globFiles(source: SearchSource, pattern: string, options: GlobOptions): Promise<GlobMatch[]> {
  const base = normalizePath(options.path ?? '.');
  const matches = await matchFiles(source, base, requirePattern(pattern), options.dot === true);
  return matches.map((path) => ({ path, isFile: true as const }));
}

/** `grep` over any workspace: the one entry point the shared layer calls. */
export async function grepFiles(source: SearchSource, pattern: string, options: GrepOptions): Promise<GrepMatch[]> {
  if (typeof pattern !== 'string' || pattern === '') throw new InvalidArgumentError('grep pattern must be a non-empty string');
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, options.ignoreCase === true ? 'iu' : 'u');
  } catch (error) {
    throw new InvalidArgumentError(`invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
  const maxMatches = options.maxMatches ?? 1000;
  if (typeof maxMatches !== 'number' || !Number.isSafeInteger(maxMatches) || maxMatches < 0)
    throw new InvalidArgumentError(`maxMatches must be a non-negative whole number, got ${String(maxMatches)}`);
  const base = normalizePath(options.path ?? '.');
  if (maxMatches === 0) return [];
  const files = await matchFiles(source, base, options.glob === undefined ? undefined : requirePattern(options.glob), false);

  const results: GrepMatch[] = [];
  for (const file of files) {
    let bytes: Uint8Array;
    try {
      bytes = await source.readFile(file);
    } catch (error) {
      // A file removed or swapped for a link during the walk is simply not searched.
      if (error instanceof FileNotFoundError || error instanceof IsADirectoryError || error instanceof PathEscapeError) continue;
      throw error;
    }
    const text = decodeUtf8(bytes);
    if (text === undefined) continue;
    const lines = splitLines(text);
    for (let index = 0; index < lines.length; index += 1) {
      const raw = lines[index] as string;
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      const match = regex.exec(line);
      if (match === null) continue;
      results.push({
        path: file,
        lineNumber: index + 1,
        lineContent: line,
        matchStart: match.index,
        matchEnd: match.index + match[0].length,
      });
      if (results.length >= maxMatches) return results;
    }
  }
  return results;
}

/**
 * Files under `base` whose path relative to `base` matches `pattern`, sorted. Without a pattern every file
 * matches except those under dot segments (as ripgrep skips hidden files), but a `base` that names a file
 * always matches. The walk starts at the pattern's literal prefix, so `src/**` never visits `node_modules/`.
 */
async function matchFiles(source: SearchSource, base: NormalizedPath, pattern: string | undefined, dot: boolean): Promise<string[]> {
  const relativePattern = (pattern ?? '**').replace(/^(?:\.?\/)+/, '');
  const matcher = picomatch(relativePattern, { dot });
  const literalPrefix = picomatch.scan(relativePattern).base;
  let start = base;
  if (literalPrefix !== '' && !literalPrefix.split('/').includes('..') && !literalPrefix.includes('\\')) {
    try {
      start = normalizePath(joinPath(base, literalPrefix));
    } catch {
      start = base;
    }
  }
  const found: string[] = [];
  for await (const entry of source.walk(start)) {
    if (!entry.isFile) continue;
    if (entry.path === base ? pattern === undefined || matcher(baseName(base)) : matcher(relativeTo(entry.path, base)))
      found.push(entry.path);
  }
  return found.sort(compareStrings);
}

function requirePattern(pattern: unknown): string {
  if (typeof pattern !== 'string' || pattern === '') throw new InvalidArgumentError('glob pattern must be a non-empty string');
  return pattern;
}

/** Code-unit order: deterministic, locale-free, the order results are promised in. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
