import * as fs from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { AllowedRoots } from '../../host-files/allow-list.js';
import { InvalidArgumentError, PathEscapeError } from '../../workspace/errors.js';
import { VERSION_CONTROL_GLOBS } from '../../workspace/version-control.js';
import { Sandbox } from '../../host-files/sandbox.js';
import { OverlayDriver } from './driver.js';
import { LowerLayer } from './lower.js';

export interface OverlayDriverOptions {
  /** The host directory shown (read lazily, never written). It must lie inside one of `allowedHostRoots`. */
  lower: string;
  /** Host directories an overlay may show. Required, as for hydration. */
  allowedHostRoots: readonly string[];
  /** Picomatch globs (`dot: true`) of lower paths never shown (a matching directory hides all it holds). */
  exclude?: readonly string[];
  /** When given, only lower files and links matching one of these globs show (directories always do). */
  include?: readonly string[];
  /**
   * Version-control internals (`.git`, `.hg`, `.svn`, `.jj`) are hidden unless `'read-only'`: then they show,
   * read-only to every mutation under the workspace's `protect` rule (as a hydration source's `includeGit`).
   */
  includeGit?: 'read-only';
}

const OVERLAY_OPTIONS: readonly string[] = ['lower', 'allowedHostRoots', 'exclude', 'include', 'includeGit'];

/**
 * The driver of a workspace over a host directory that it never writes: the directory is read lazily,
 * through the host sandbox (links followed inside it only, the descriptor of every read checked), and every
 * write, new directory and deletion lives in an in-memory upper layer. Opening costs nothing however big the
 * directory; snapshots are O(1). A lower file that changes on disk after the session read it raises
 * `ConflictError` on the next access instead of showing through. See docs/composition.md.
 */
export function overlayDriver(options: OverlayDriverOptions): OverlayDriver {
  return new OverlayDriver(openLower(options));
}

/** Checks the options and finds the lower directory's real path inside the allow-list. */
function openLower(options: OverlayDriverOptions): LowerLayer {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('overlayDriver needs an options object');
  const unknown = Object.keys(options).filter((key) => !OVERLAY_OPTIONS.includes(key));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `overlayDriver does not take ${unknown.join(', ')} (its options: ${OVERLAY_OPTIONS.join(', ')}; readOnly, limits, policy, audit and protect go to createWorkspace)`,
    );
  const { lower, allowedHostRoots, includeGit } = options;
  if (typeof lower !== 'string' || lower === '' || lower.includes('\0'))
    throw new InvalidArgumentError('lower must be a non-empty host path');
  for (const [name, globs] of [
    ['exclude', options.exclude],
    ['include', options.include],
  ] as const) {
    if (globs !== undefined && (!Array.isArray(globs) || globs.some((glob) => typeof glob !== 'string' || glob === '')))
      throw new InvalidArgumentError(`${name} must be a list of non-empty glob strings`);
  }
  if (includeGit !== undefined && includeGit !== 'read-only')
    throw new InvalidArgumentError(`includeGit must be 'read-only' or omitted, got ${JSON.stringify(includeGit)}`);
  const allowed = AllowedRoots.resolveSync(allowedHostRoots, 'an overlay');
  let root: string;
  try {
    root = fs.realpathSync.native(isAbsolute(lower) ? lower : resolve(lower));
  } catch {
    throw new InvalidArgumentError('the overlay lower directory does not exist or cannot be read');
  }
  if (!allowed.contains(root)) throw new PathEscapeError(undefined, 'the overlay lower directory lies outside allowedHostRoots');
  if (!fs.statSync(root).isDirectory()) throw new InvalidArgumentError('the overlay lower path is not a directory');
  const exclude = [...(options.exclude ?? []), ...(includeGit === 'read-only' ? [] : VERSION_CONTROL_GLOBS)];
  return new LowerLayer(new Sandbox(root), { exclude, include: options.include });
}
