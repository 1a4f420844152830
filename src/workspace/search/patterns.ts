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

/** The literal directory prefix of a glob (`src/lib` for `src/lib/**\/*.ts`): where its walk may start. */
export function globLiteralBase(pattern: string): string {
  return picomatch.scan(pattern).base;
}

/** What grep searches without a `glob`: every file, except under dot segments (as ripgrep skips hidden files). A fixed glob, safe on the main thread. */
export const searchedByDefault: (path: string) => boolean = picomatch('**', { dot: false });
