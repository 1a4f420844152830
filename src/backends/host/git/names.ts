/**
 * How host names are stored in snapshot trees.
 *
 * Git (and isomorphic-git) refuse a tree entry named `.git` in any letter case, and git trees cannot hold
 * an empty directory. Both are ordinary content for sessionfs, so names are escaped reversibly:
 *
 * - a name that is `.git` in any case, or that starts with `%`, is stored with one extra `%` in front
 *   (`.git` → `%.git`, `%x` → `%%x`); unescaping strips exactly one leading `%`;
 * - an empty directory holds one entry named `%` (an empty blob): no escaped name can be `%` alone, so it
 *   never collides with a real file.
 */
export const EMPTY_DIR_MARKER = '%';

export function escapeName(name: string): string {
  return name.startsWith('%') || name.toLowerCase() === '.git' ? `%${name}` : name;
}

export function unescapeName(stored: string): string {
  return stored.startsWith('%') ? stored.slice(1) : stored;
}
