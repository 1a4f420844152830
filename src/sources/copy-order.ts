import type { Dirent } from 'node:fs';

/**
 * A directory's entries in walk order: a directory (not a link to one) sorts as its name and a slash, as
 * its entries' paths do, so the walk plans a source's files in the order of their workspace paths — the
 * order the copy takes them in (see `Planner.walked`).
 */
export function sortedForWalk(children: Dirent[]): Dirent[] {
  return children.sort(walkOrder);
}

/** `compare` of the walk's keys (a directory's name and a slash), without building them. */
function walkOrder(a: Dirent, b: Dirent): number {
  const x = a.name;
  const y = b.name;
  // Only when one name begins the other can the slash decide; a name holds no slash, so never a tie.
  if (x.length < y.length && y.startsWith(x) && a.isDirectory()) return SLASH - y.charCodeAt(x.length);
  if (y.length < x.length && x.startsWith(y) && b.isDirectory()) return x.charCodeAt(y.length) - SLASH;
  return compare(x, y);
}

const SLASH = 0x2f;

/** Code-unit order of two strings: the order of workspace paths in the plan and the copy. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
