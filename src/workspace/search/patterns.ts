import picomatch from 'picomatch';
import { InvalidArgumentError } from '../errors.js';

/** The longest glob or grep pattern accepted, in UTF-8 bytes: longer ones are refused before compiling. */
export const MAX_PATTERN_BYTES = 4096;

/** A non-empty pattern of at most 4 KiB, or `InvalidArgumentError`. */
export function requirePattern(pattern: unknown, what: 'glob' | 'grep'): string {
  if (typeof pattern !== 'string' || pattern === '') throw new InvalidArgumentError(`${what} pattern must be a non-empty string`);
  const bytes = Buffer.byteLength(pattern, 'utf8');
  if (bytes > MAX_PATTERN_BYTES)
    throw new InvalidArgumentError(`${what} pattern is ${bytes} bytes, over the limit of ${MAX_PATTERN_BYTES} bytes`);
  return pattern;
}

/** The flags grep's regex runs with; the pattern is compiled here once so a bad one is refused up front. */
export function grepFlags(pattern: string, ignoreCase: boolean): string {
  const flags = ignoreCase ? 'iu' : 'u';
  try {
    new RegExp(pattern, flags);
  } catch (error) {
    throw new InvalidArgumentError(`invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
  return flags;
}

/** A glob as picomatch compiles it, in a form a worker can match with: its regex's text and flags, and the glob. */
export interface CompiledGlob {
  source: string;
  flags: string;
  glob: string;
}

/** picomatch's compilation of a glob; any failure is `InvalidArgumentError`, never a bare SyntaxError. */
export function compileGlob(pattern: string, dot: boolean): CompiledGlob {
  try {
    const regex = picomatch.makeRe(pattern, { dot });
    return { source: regex.source, flags: regex.flags, glob: pattern };
  } catch (error) {
    throw new InvalidArgumentError(`invalid glob pattern ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
}

/** Characters picomatch matches as themselves wherever they stand in a name. */
const PLAIN = /^[\w.-]$/;

/**
 * A cheap necessary condition for a path to match a glob, tested on the main thread so that only paths that
 * may match go to a worker: the plain characters that begin and end the glob's last segment must begin and
 * end the path's last name (`.ts` for `**\/*.ts`, `package.json` for `**\/package.json`). Undefined when the
 * glob gives no such characters, or has syntax that could change what its last segment spans (braces,
 * classes, extglobs, escapes, alternatives with `|`, a negation, a `**` inside a name).
 */
export function globNameFilter(glob: string): ((path: string) => boolean) | undefined {
  if (!hasPlainSyntax(glob)) return undefined;
  const segment = glob.slice(glob.lastIndexOf('/') + 1);
  if (segment.includes('**') || segment === '.' || segment === '..') return undefined;
  let start = 0;
  while (start < segment.length && PLAIN.test(segment.charAt(start))) start += 1;
  let end = segment.length;
  while (end > 0 && PLAIN.test(segment.charAt(end - 1))) end -= 1;
  const prefix = segment.slice(0, start);
  const suffix = segment.slice(end);
  if (prefix === '' && suffix === '') return undefined;
  const least = Math.max(prefix.length, suffix.length);
  // Neither holds a '/': checked in place, without cutting the name out of the path.
  return (path) => {
    const name = path.lastIndexOf('/') + 1;
    return path.length - name >= least && path.endsWith(suffix) && path.startsWith(prefix, name);
  };
}

/**
 * Whether nothing in a directory whose name starts with `.` can match: true for grep without a glob (it
 * skips dot segments) and for a glob without `dot` none of whose segments starts with `.`, in plain syntax
 * (`*`, `?` and `**` never match a leading `.` without `dot`). The walk then does not list such directories
 * (`.git` is never read for `**\/*.ts`).
 */
export function skipsDotDirectories(glob: string | undefined, dot: boolean): boolean {
  if (dot) return false;
  return glob === undefined || (hasPlainSyntax(glob) && !glob.split('/').some((segment) => segment.startsWith('.')));
}

/** No syntax that could match more than its segments say: braces, classes, extglobs, escapes, `|`, a negation. */
function hasPlainSyntax(glob: string): boolean {
  return !/^(?:\.?\/)*!/.test(glob) && !/[{}()[\]\\|]/.test(glob); // picomatch drops a leading `./` before a `!`
}

/** The literal directory prefix of a glob (`src/lib` for `src/lib/**\/*.ts`): where its walk may start. */
export function globLiteralBase(pattern: string): string {
  return picomatch.scan(pattern).base;
}

/**
 * What grep searches without a `glob`: every file, except under dot segments (as ripgrep skips hidden
 * files). What picomatch's `**` without `dot` matches on a normalized path, tested without a regex: it runs
 * once per file of the tree.
 */
export function searchedByDefault(path: string): boolean {
  return path !== '' && !path.startsWith('.') && !path.includes('/.');
}
