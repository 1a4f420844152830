import { forwardingView } from '../session/forwarding-view.js';
import { PolicyError } from '../workspace/errors.js';
import { displayPath, isSameOrInside, normalizePath, type NormalizedPath } from '../workspace/paths.js';
import type { DiffEntry, GlobMatch, GrepMatch, ListEntry, SnapshotableWorkspace, WriteFilesEntry } from '../workspace/types.js';

type Method = (...args: unknown[]) => unknown;

/** Inside a scope path, on the way to one (a directory that holds one), or neither. */
type Standing = 'inside' | 'above' | 'outside';

/**
 * A view of a tool's filesystem limited to the workspace paths the MCP client's roots cover
 * (see docs/mcp-and-cli.md, "Roots"). Paths a tool names must lie inside the scope; the directories above it may
 * only be looked at (`exists`, `stat`, `list`, and `glob`/`grep` from there), and what lists and searches
 * return is cut to the scope. Methods it does not know are refused, so a method added to the protocol
 * later cannot step around the roots.
 */
export function scopedWorkspace(target: SnapshotableWorkspace, scope: readonly NormalizedPath[]): SnapshotableWorkspace {
  const standing = (path: NormalizedPath): Standing => {
    if (scope.some((root) => isSameOrInside(path, root))) return 'inside';
    return scope.some((root) => isSameOrInside(root, path)) ? 'above' : 'outside';
  };
  const refuse = (path: NormalizedPath): PolicyError =>
    new PolicyError(`${displayPath(path)} is outside the roots the MCP client gave (${scope.join(', ')})`, displayPath(path));
  /** Throws unless `input` is inside the scope (or, when `lookOnly`, a directory above it); returns the normalised path. */
  const check = (input: unknown, lookOnly = false): NormalizedPath => {
    const path = normalizePath(input ?? '');
    const where = standing(path);
    if (where === 'inside' || (lookOnly && where === 'above')) return path;
    throw refuse(path);
  };
  const visible = (path: string): boolean => standing(normalizePath(path)) !== 'outside';
  const within = (path: string): boolean => standing(normalizePath(path)) === 'inside';

  /** Methods whose first argument is the one path they touch. */
  const onePath =
    (m: Method): Method =>
    (path, ...rest) =>
      m(check(path), ...rest);
  const twoPaths =
    (m: Method): Method =>
    (from, to, ...rest) =>
      m(check(from), check(to), ...rest);
  const scoped: Record<string, (method: Method) => Method> = {
    read: onePath,
    readBytes: onePath,
    createReadStream: onePath,
    write: onePath,
    writeBytes: onePath,
    createWriteStream: onePath,
    mkdir: onePath,
    delete: onePath,
    rename: twoPaths,
    copy: twoPaths,
    writeFiles: (m) => (entries) => {
      for (const entry of entries as readonly WriteFilesEntry[]) check(entry.path);
      return m(entries);
    },
    exists: (m) => (path) => m(check(path, true)),
    stat: (m) => (path) => m(check(path, true)),
    list: (m) => async (path) => ((await m(check(path, true))) as ListEntry[]).filter((entry) => visible(entry.path)),
    glob: (m) => async (pattern, options) => {
      check((options as { path?: string } | undefined)?.path, true);
      return ((await m(pattern, options)) as GlobMatch[]).filter((match) => within(match.path));
    },
    grep: (m) => async (pattern, options) => {
      check((options as { path?: string } | undefined)?.path, true);
      return ((await m(pattern, options)) as GrepMatch[]).filter((match) => within(match.path));
    },
    diff:
      (m) =>
      async (...args) =>
        ((await m(...args)) as DiffEntry[]).filter((entry) => within(entry.path)),
    // Whole-workspace operations the snapshot, restore and diff tools rely on.
    snapshot: (m) => m,
    restore: (m) => m,
  };

  return forwardingView(target, {
    wrap(method, property) {
      const wrap = typeof property === 'string' && Object.hasOwn(scoped, property) ? scoped[property] : undefined;
      if (wrap !== undefined) return wrap((...args: unknown[]) => method.apply(target, args));
      return () => Promise.reject(new PolicyError(`${String(property)} is not available while the MCP client's roots limit the workspace`));
    },
  });
}
