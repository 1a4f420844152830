import picomatch from 'picomatch';
import { isExpressibleName } from '../../workspace/paths.js';
import { isTempName } from './atomic.js';

/**
 * Whether a host directory entry is visible to the workspace at all: temp files of atomic writes are not,
 * and neither are names a workspace path cannot express (control characters, backslashes, bytes that are
 * not UTF-8, which Node decodes to U+FFFD). Walks skip these; restore leaves them alone.
 */
export function isVisibleName(name: string): boolean {
  return isExpressibleName(name) && !isTempName(name);
}

/** The workspace's `exclude` globs (picomatch, `dot: true`) as one predicate on relative paths. */
export function excludeMatcher(globs: readonly string[] | undefined): ((rel: string) => boolean) | undefined {
  if (globs === undefined || globs.length === 0) return undefined;
  const matchers = globs.map((glob) => picomatch(glob, { dot: true }));
  return (rel) => matchers.some((m) => m(rel));
}
