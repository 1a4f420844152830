import { PathEscapeError } from '../workspace/errors.js';
import { MAX_LINK_HOPS } from '../workspace/links.js';
import { displayPath, isSameOrInside, joinPath, type NormalizedPath } from '../workspace/paths.js';
import type { Route } from './mount-table.js';

/**
 * A link never crosses a mount. A mounted workspace resolves links inside itself, so a target that climbs
 * above its mount point is already an escape there (`PathEscapeError`). What the mounted workspace cannot
 * see is the composition: a mount point nested inside it shadows part of its tree, and a link leading there
 * would reach what the composition hides (the mount's own files under the nested mount point) instead of
 * the nested mount. This walk follows the links on `route.inner` the way the mounted workspace will (its
 * `stat` and `readlink`), and refuses the path when it passes through a nested mount point, or when a link
 * on it is absolute (a host mount would resolve it against its own root, which the composition cannot
 * place). `nested`: the nested mount points, relative to the mount. Anything else the mounted workspace
 * answers itself (a missing entry, a link leaving it, a loop): the walk stops there and lets it.
 */
export async function assertLinksStayInMount(route: Route, nested: readonly NormalizedPath[], followFinal: boolean): Promise<void> {
  if (nested.length === 0 || route.inner === '') return;
  await followInMount(route, nested, followFinal);
}

/**
 * Where `route.inner` leads inside its mount, its links followed (the final one when `followFinal`) as the
 * mounted workspace follows them, refusing what `assertLinksStayInMount` refuses; past a missing entry (or
 * whatever the mounted workspace will refuse itself) the rest is kept as written. What a composition's
 * policy and `protect` rule judge: where an access really lands, not the link's name.
 */
export async function followInMount(
  { mount, inner }: Route,
  nested: readonly NormalizedPath[],
  followFinal: boolean,
): Promise<NormalizedPath> {
  const refuse = (): PathEscapeError => {
    const shown = displayPath(joinPath(mount.path, inner));
    return new PathEscapeError(shown, `a symlink leads out of the mount at ${displayPath(mount.path)}: ${shown}`);
  };
  const queue = inner.split('/');
  const names: string[] = [];
  let lexical = false; // past a missing entry the rest is appended as written, as resolution does
  let hops = 0;
  while (queue.length > 0) {
    const name = queue.shift() as string;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (names.pop() === undefined) return inner; // climbs out of the mount: the mount refuses it itself
      continue;
    }
    names.push(name);
    const real = names.join('/');
    if (nested.some((point) => isSameOrInside(real, point))) throw refuse();
    const last = queue.every((later) => later === '' || later === '.');
    if (lexical || (last && !followFinal)) continue;
    let isSymlink: boolean;
    try {
      isSymlink = (await mount.workspace.stat(real)).isSymlink;
    } catch {
      lexical = true;
      continue;
    }
    if (!isSymlink) continue;
    if ((hops += 1) > MAX_LINK_HOPS) return inner;
    let target: string;
    try {
      target = await mount.workspace.readlink(real);
    } catch {
      return inner;
    }
    if (target.startsWith('/')) throw refuse();
    names.pop();
    queue.unshift(...target.split('/'));
  }
  return names.join('/');
}
