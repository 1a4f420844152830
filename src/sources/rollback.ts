import { parentPath, type NormalizedPath } from '../workspace/paths.js';
import type { Workspace } from '../workspace/types.js';

/**
 * The topmost paths a hydration is about to create, noted before it writes. A restore puts back what the
 * workspace's snapshots hold, but a backend may leave some paths out of its snapshots (a host workspace's
 * `exclude` globs): a restore never touches them, so a hydration that failed would leave its files there.
 * After the restore, whatever of these paths still exists is removed, whatever the backend.
 *
 * Only the boundary is checked: a planned path whose parent existed before (or is the root). Below a path
 * found missing, everything is new, so a fresh hydration costs one `exists` per source.
 */
export class CreatedPaths {
  readonly #created: NormalizedPath[] = [];

  /** `planned` sorted so that every directory comes before what it holds. */
  static async note(workspace: Workspace, planned: readonly NormalizedPath[]): Promise<CreatedPaths> {
    const tracker = new CreatedPaths();
    const missing = new Set<NormalizedPath>();
    // Siblings come together: their parent is looked up once.
    let lastParent: NormalizedPath | undefined;
    let lastUnder = false;
    for (let index = 0; index < planned.length; index += 1) {
      const path = planned[index] as NormalizedPath;
      const parent = parentPath(path);
      if (parent !== lastParent) {
        lastParent = parent;
        lastUnder = isUnder(parent, missing);
      }
      if (lastUnder) continue;
      if (!(await isThere(workspace, path))) {
        missing.add(path);
        tracker.#created.push(path);
      }
    }
    return tracker;
  }

  /** Removes what is left of the noted paths. */
  async remove(workspace: Workspace): Promise<void> {
    for (const path of this.#created) {
      if (await isThere(workspace, path)) await workspace.delete(path, { recursive: true });
    }
  }
}

/** Whether anything stands at `path`: what `exists` sees, or a link leading nowhere (hydration copies those too). */
async function isThere(workspace: Workspace, path: NormalizedPath): Promise<boolean> {
  if (await workspace.exists(path)) return true;
  return workspace.readlink(path).then(
    () => true,
    () => false,
  );
}

/** Whether `path` is one of `roots` or lies below one (`roots` hold no root path `''`). */
function isUnder(path: NormalizedPath, roots: ReadonlySet<NormalizedPath>): boolean {
  for (let current = path; current !== ''; current = parentPath(current)) if (roots.has(current)) return true;
  return false;
}
