import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { isAbsolute, resolve, sep } from 'node:path';
import { InvalidArgumentError, PathEscapeError } from '../workspace/errors.js';

/**
 * The allow-list: host directories, resolved to their real paths (symlinks and `..` resolved by the
 * kernel), that host sources may read from. A root that does not exist allows nothing.
 */
export class AllowedRoots {
  private constructor(readonly roots: readonly string[]) {}

  static async resolve(input: unknown, purpose = 'hydration'): Promise<AllowedRoots> {
    const roots: string[] = [];
    for (const root of checkedRoots(input, purpose)) {
      try {
        roots.push(await realpath(root));
      } catch {
        // A missing or unreadable root allows nothing.
      }
    }
    return AllowedRoots.#of(roots, purpose);
  }

  /** The same, synchronously: for constructors (an overlay workspace checks its lower directory when created). */
  static resolveSync(input: unknown, purpose = 'hydration'): AllowedRoots {
    const roots: string[] = [];
    for (const root of checkedRoots(input, purpose)) {
      try {
        roots.push(realpathSync.native(root));
      } catch {
        // A missing or unreadable root allows nothing.
      }
    }
    return AllowedRoots.#of(roots, purpose);
  }

  static #of(roots: string[], purpose: string): AllowedRoots {
    if (roots.length === 0) {
      throw new PathEscapeError(undefined, `${purpose} refused: none of the allowedHostRoots exists`);
    }
    return new AllowedRoots(roots);
  }

  /** Whether a real (already resolved) host path is one of the roots or lies below one. */
  contains(realPath: string): boolean {
    return this.roots.some((root) => realPath === root || realPath.startsWith(root.endsWith(sep) ? root : `${root}${sep}`));
  }
}

/** The allow-list as given, checked and made absolute. */
function checkedRoots(input: unknown, purpose: string): string[] {
  if (input === undefined || input === null || (Array.isArray(input) && input.length === 0)) {
    throw new PathEscapeError(
      undefined,
      `${purpose} refused: no allowedHostRoots were given, so no host path may be ${purpose === 'hydration' ? 'copied in' : 'used'}`,
    );
  }
  if (!Array.isArray(input) || !input.every((root) => typeof root === 'string' && root !== '' && !root.includes('\0'))) {
    throw new InvalidArgumentError('allowedHostRoots must be a list of non-empty host paths');
  }
  return (input as string[]).map((root) => (isAbsolute(root) ? root : resolve(root)));
}
