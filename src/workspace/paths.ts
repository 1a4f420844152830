import { InvalidArgumentError, InvalidPathError, LimitExceededError, PathEscapeError } from './errors.js';
import type { WorkspaceLimits } from './limits.js';

/**
 * Workspace paths. Internally a path is its normalised relative form: POSIX segments joined by `/`, no
 * leading or trailing slash, and `''` for the root. Results show the root as `/` (see {@link displayPath}).
 *
 * Every path a caller gives is treated as hostile: control characters and backslashes are refused before
 * any I/O, and `..` that would climb above the root is refused, never clamped.
 */
export type NormalizedPath = string;

// C0 controls, DEL and C1 controls: none of them belongs in a file name a model should see.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Whether a name found on a host disk can be a segment of a workspace path: no control character, no
 * backslash, and no U+FFFD, which is how Node decodes a name whose bytes are not UTF-8 (the bytes could
 * never be named back). Host walks and hydration skip the names that cannot.
 */
export function isExpressibleName(name: string): boolean {
  return !CONTROL_CHARACTERS.test(name) && !name.includes('\\') && !name.includes('\ufffd');
}

export function normalizePath(input: unknown): NormalizedPath {
  if (typeof input !== 'string') {
    throw new InvalidArgumentError(`path must be a string, got ${input === null ? 'null' : typeof input}`);
  }
  if (isCleanNormalForm(input)) return input;
  if (CONTROL_CHARACTERS.test(input)) {
    throw new InvalidPathError(printable(input), `invalid path ${JSON.stringify(input)}: control characters are not allowed`);
  }
  if (input.includes('\\')) {
    throw new InvalidPathError(input, `invalid path ${JSON.stringify(input)}: use '/' as the separator, backslashes are not allowed`);
  }
  const segments: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) {
        throw new PathEscapeError(input, `path ${JSON.stringify(input)} climbs above the workspace root`);
      }
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  return segments.join('/');
}

/**
 * Whether `input` is already normalised and clean, in one pass: no control character or backslash, no
 * leading, trailing or doubled slash, no `.` or `..` segment. Most paths are (those the library made, and
 * most given), and they need no split and join; every operation on every path asks.
 */
function isCleanNormalForm(input: string): boolean {
  const length = input.length;
  let segmentStart = 0;
  let dotsOnly = true;
  for (let index = 0; index < length; index += 1) {
    const code = input.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === BACKSLASH) return false;
    if (code === SLASH) {
      if (index === segmentStart || (dotsOnly && index - segmentStart <= 2)) return false;
      segmentStart = index + 1;
      dotsOnly = true;
    } else if (code !== DOT) dotsOnly = false;
  }
  return length === 0 || !(segmentStart === length || (dotsOnly && length - segmentStart <= 2));
}

const SLASH = 0x2f;
const DOT = 0x2e;
const BACKSLASH = 0x5c;

/** The form results and errors show: `/` for the root, the relative path otherwise. */
export function displayPath(path: NormalizedPath): string {
  return path === '' ? '/' : path;
}

/** Best-effort display of a caller's path for an error raised before it could be normalised. */
export function displayInput(input: unknown): string | undefined {
  if (typeof input !== 'string') return undefined;
  try {
    return displayPath(normalizePath(input));
  } catch {
    return printable(input);
  }
}

/** A name or path as it can be shown: control characters escaped. */
export function printable(input: string): string {
  return JSON.stringify(input)
    .slice(1, -1)
    .replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function splitPath(path: NormalizedPath): string[] {
  return path === '' ? [] : path.split('/');
}

export function joinPath(parent: NormalizedPath, name: string): NormalizedPath {
  return parent === '' ? name : `${parent}/${name}`;
}

/** Whether `path` is an entry right inside the directory `parent` (`''`: the root), found without cutting `path`. */
export function isChildOf(path: NormalizedPath, parent: NormalizedPath): boolean {
  if (parent === '') return path !== '' && !path.includes('/');
  return path.length > parent.length + 1 && path.lastIndexOf('/') === parent.length && path.startsWith(parent);
}

export function parentPath(path: NormalizedPath): NormalizedPath {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

export function baseName(path: NormalizedPath): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** True when `path` is `ancestor` or lies below it. */
export function isSameOrInside(path: NormalizedPath, ancestor: NormalizedPath): boolean {
  return ancestor === '' || path === ancestor || path.startsWith(`${ancestor}/`);
}

/** `path` relative to `base` (which must contain it); `''` when they are equal. */
export function relativeTo(path: NormalizedPath, base: NormalizedPath): NormalizedPath {
  if (base === '') return path;
  return path === base ? '' : path.slice(base.length + 1);
}

export function pathDepth(path: NormalizedPath): number {
  return path === '' ? 0 : path.split('/').length;
}

/**
 * Creation limits: a path a caller creates (write, mkdir, rename and copy targets, hydration) may have at
 * most `maxPathDepth` segments, each of at most `maxSegmentLength` code points. `extraDepth` accounts for
 * the deepest descendant when a directory is moved or copied under `path`.
 */
export function assertCreatable(path: NormalizedPath, limits: Readonly<WorkspaceLimits>, extraDepth = 0): void {
  const breach = limitBreach(path, limits, extraDepth);
  if (breach === undefined) return;
  const message =
    'depth' in breach
      ? `path is too deep: ${breach.depth} segments, the limit is ${limits.maxPathDepth}`
      : `path segment is too long: ${breach.length} characters, the limit is ${limits.maxSegmentLength}`;
  throw new LimitExceededError(`${message}: ${displayPath(path)}`, displayPath(path), { limit: 'path' });
}

/** Whether a path fits the creation limits, for walks that skip rather than fail (hydration). */
export function fitsLimits(path: NormalizedPath, limits: Readonly<WorkspaceLimits>): boolean {
  return limitBreach(path, limits, 0) === undefined;
}

/**
 * How `path` (with `extraDepth` more segments) breaks the creation limits: too many segments, or the first
 * segment over the length limit in code points; undefined when it fits. Scans the string without splitting
 * it: every write of every file asks.
 */
function limitBreach(
  path: NormalizedPath,
  limits: Readonly<WorkspaceLimits>,
  extraDepth: number,
): { depth: number } | { length: number } | undefined {
  let depth = extraDepth;
  if (path !== '') {
    depth += 1;
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) depth += 1;
  }
  if (depth > limits.maxPathDepth) return { depth };
  // Code points never outnumber UTF-16 units: only a segment long in units needs counting.
  if (path.length <= limits.maxSegmentLength) return undefined;
  for (let start = 0; start < path.length;) {
    const slash = path.indexOf('/', start);
    const end = slash === -1 ? path.length : slash;
    if (end - start > limits.maxSegmentLength) {
      const length = [...path.slice(start, end)].length;
      if (length > limits.maxSegmentLength) return { length };
    }
    start = end + 1;
  }
  return undefined;
}

/** `normalizePath`, with `undefined` for a path that leaves the root (what `exists` answers `false` for). */
export function normalizeInside(path: string): NormalizedPath | undefined {
  try {
    return normalizePath(path);
  } catch (error) {
    if (error instanceof PathEscapeError) return undefined;
    throw error;
  }
}

/** Code-unit order: deterministic, locale-free, the order results are promised in. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
