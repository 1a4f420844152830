import type { SnapshotEntry, SnapshotTree } from '../workspace/driver.js';
import { TREE_PARTS, type TreeParts } from '../snapshots/snapshot-tree.js';
import { joinPath, normalizePath, pathDepth, splitPath, type NormalizedPath } from '../workspace/paths.js';
import type { MountTable } from './mount-table.js';

/**
 * One tree over the mounts' trees, as the composition shows them: the directories the mount table makes
 * first (parents before children), then each mount's entries under its mount point, leaving out what a
 * nested mount point shadows and every disabled mount. `trees` maps a mount path to that mount's tree;
 * a mount without one (it takes no snapshots) is absent from the composed tree too.
 */
export function composeTree(table: MountTable, trees: ReadonlyMap<NormalizedPath, SnapshotTree>): SnapshotTree {
  const mountDirectories = table.mounts
    .filter((mount) => mount.access !== 'disabled')
    .flatMap((mount) => splitPath(mount.path).map((_, index, segments) => segments.slice(0, index + 1).join('/')));
  const directories = [...new Set(mountDirectories)].sort((a, b) => pathDepth(a) - pathDepth(b));
  const outer = (mountPath: NormalizedPath, entry: SnapshotEntry): SnapshotEntry => ({
    ...entry,
    path: entry.path === '' ? mountPath : joinPath(mountPath, normalizePath(entry.path)),
  });
  const parts = new Map<string, { tree: SnapshotTree; outer(path: string): string | undefined }>();
  for (const mount of table.mounts) {
    const tree = trees.get(mount.path);
    if (tree === undefined || mount.access === 'disabled') continue;
    const show = (inner: string): string | undefined => {
      const path = outer(mount.path, { path: inner, kind: 'directory' }).path;
      return table.route(path)?.mount === mount && !table.isMountDirectory(path) ? path : undefined;
    };
    parts.set(mount.path, { tree, outer: show });
  }
  const tree: SnapshotTree & { [TREE_PARTS]: TreeParts } = {
    [TREE_PARTS]: { layout: table, parts },
    async entry(path) {
      if (table.isHidden(path)) return undefined;
      if (table.isMountDirectory(path)) return { path, kind: 'directory' };
      const route = table.route(path);
      const tree = route === undefined ? undefined : trees.get(route.mount.path);
      if (route === undefined || tree === undefined) return undefined;
      const found = await tree.entry(route.inner);
      return found === undefined ? undefined : { ...found, path };
    },
    async *entries() {
      for (const path of directories) if (path !== '') yield { path, kind: 'directory' };
      for (const mount of table.mounts) {
        const tree = trees.get(mount.path);
        if (tree === undefined || mount.access === 'disabled') continue;
        for await (const entry of tree.entries()) {
          const shown = outer(mount.path, entry);
          if (table.route(shown.path)?.mount === mount && !table.isMountDirectory(shown.path)) yield shown;
        }
      }
    },
  };
  return tree;
}
