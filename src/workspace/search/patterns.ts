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

/** picomatch's matcher for a glob; any failure to compile one is `InvalidArgumentError`, never a bare SyntaxError. */
export function globMatcher(pattern: string, dot: boolean): (path: string) => boolean {
  try {
    return picomatch(pattern, { dot });
  } catch (error) {
    throw new InvalidArgumentError(`invalid glob pattern ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
}

/** The literal directory prefix of a glob (`src/lib` for `src/lib/**\/*.ts`): where its walk may start. */
export function globLiteralBase(pattern: string): string {
  return picomatch.scan(pattern).base;
}
