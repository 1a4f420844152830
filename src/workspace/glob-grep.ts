import { InvalidArgumentError } from './errors.js';
import { normalizePath } from './paths.js';
import { SearchDeadline } from './search/deadline.js';
import { withoutIgnored } from './search/gitignore.js';
import { requiredLiterals } from './search/literal.js';
import { grepFlags, requirePattern } from './search/patterns.js';
import { selectFiles } from './search/select.js';
import { scanFiles } from './search/scan.js';
import { ScanAhead } from './search/scan-ahead.js';
import type { SearchEntry, SearchSource } from './search/source.js';
import type { GlobMatch, GlobOptions, GrepMatch, GrepOptions, SearchCallOptions } from './types.js';

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
  const matches = await deadline.run(async (bounds) =>
    unlessIgnored(source, await selectFiles(source, base, checked, options.dot === true, bounds), options, bounds),
  );
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
  const [needle, ...others] = requiredLiterals(checked, options.ignoreCase === true) ?? [];
  // The other runs a matching line holds: a line with the needle but without one of them is not decoded.
  const alsoNeeded = others.filter((other, index) => !needle?.includes(other) && others.indexOf(other) === index);
  const request = { pattern: checked, flags, maxMatches, needle, alsoNeeded };
  return deadline.run(async (bounds) => {
    // Files are matched while the walk goes on, unless .gitignore may rule out many of them afterwards.
    const ahead = options.respectGitignore === true ? undefined : new ScanAhead(source, request, bounds.signal);
    let selected: SearchEntry[];
    try {
      selected = await selectFiles(source, base, glob, false, bounds, ahead);
    } catch (error) {
      ahead?.abandon();
      throw error;
    }
    return scanFiles(source, await unlessIgnored(source, selected, options, bounds), request, bounds, ahead?.searched);
  });
}

/** The selected files, less those `.gitignore` ignores when the call asks (`respectGitignore`). */
async function unlessIgnored(
  source: SearchSource,
  files: SearchEntry[],
  options: SearchCallOptions,
  deadline: SearchDeadline,
): Promise<SearchEntry[]> {
  if (options.respectGitignore !== true) return files;
  const { kept, ignored } = await withoutIgnored(source, files, deadline);
  options.onIgnored?.(ignored);
  return kept;
}

export { compareStrings } from './paths.js';
export type { SearchEntry, SearchSource } from './search/source.js';
