import picomatch from 'picomatch';
import { isExpressibleName } from '../workspace/paths.js';

/**
 * Temp files of the host backend's atomic writes have a fixed shape:
 * `.sessionfs-tmp-<pid>.<start>.<host>-<16 hex>`, the writer's owner token (see backends/host/owned-temp.ts)
 * and a random part. The owner token lets a later workspace remove the temp files of a writer killed
 * mid-write (`sweepStaleTempFiles`) and never a live writer's. Names of the older shape
 * `.sessionfs-tmp-<16 hex>` (no owner) stay hidden and are never removed. A host file that happens to have
 * either shape is hidden too (documented).
 */
export const TEMP_PREFIX = '.sessionfs-tmp-';
export const TEMP_NAME = /^\.sessionfs-tmp-(?:(\d{1,10})\.(\d{1,20})\.([0-9a-f]{6})-)?[0-9a-f]{16}$/;

export function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) && TEMP_NAME.test(name);
}

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
