import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import type { ListEntry, Workspace } from '../../workspace/types.js';
import { defineTool } from '../../session/define-tool.js';
import { formatBytes } from '../../text/format-bytes.js';
import { count, guard, ok, pathParam, READ_ONLY, type ToolDeps } from './shared.js';

const DEFAULT_DEPTH = 3;
const MAX_DEPTH = 20;

export interface TreeEntry {
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  /** Files: their size. Directories listed whole: the total of the files under them. */
  sizeBytes?: number;
  /** Directories at the depth limit, or not reached before the entry cap: their content is not listed. */
  expanded?: boolean;
}

interface Node {
  entry: ListEntry;
  depth: number;
  size?: number;
  children?: Node[];
  /** Why the content is not (all) shown: below the depth limit, past the entry cap, or listed in part. */
  cut?: 'depth' | 'cap' | 'partial';
}

/**
 * `directory_tree`: the tree under a directory to `depth` levels, with file sizes and, for directories
 * listed whole, the total under them. Walks breadth-first (so a cap keeps the upper levels, which say the
 * most) and stops at `maxTreeEntries`, saying so. Symbolic links are shown, never followed.
 */
export function directoryTreeTool({ limits }: ToolDeps) {
  return defineTool({
    name: 'directory_tree',
    annotations: READ_ONLY,
    description:
      `Show the files and directories under a directory as an indented tree, with sizes, to a depth (default ${DEFAULT_DEPTH}, at most ${MAX_DEPTH}). ` +
      `At most ${limits.maxTreeEntries} entries; the result says when it was cut. Use it to get to know a project; use glob to find files by name.`,
    parameters: z.object({
      path: pathParam('Directory to show (default the root)').optional(),
      depth: z
        .number()
        .int()
        .min(1)
        .max(MAX_DEPTH)
        .optional()
        .describe(`Levels to descend (1 = the directory's own children). Default ${DEFAULT_DEPTH}.`),
    }),
    handler: guard('directory_tree', async ({ path, depth }, { filesystem }) => {
      const maxDepth = depth ?? DEFAULT_DEPTH;
      const base = displayPath(normalizePath(path ?? '/'));
      const roots = await filesystem.list(base);
      const top = roots.slice(0, limits.maxTreeEntries).map((entry): Node => ({ entry, depth: 1 }));
      let shown = top.length;
      let truncated = roots.length > top.length;
      for (let level = top; level.length > 0;) {
        await sizeFiles(filesystem, level);
        const dirs = level.filter((node) => isDir(node.entry));
        for (const node of dirs) if (node.depth >= maxDepth) node.cut = 'depth';
        const open = dirs.filter((node) => node.cut === undefined);
        // One level's listings run concurrently; the cap is applied in order, so the result is stable.
        const listings = await Promise.all(open.map((node) => filesystem.list(node.entry.path)));
        const next: Node[] = [];
        for (const [index, node] of open.entries()) {
          const entries = listings[index] as ListEntry[];
          const room = limits.maxTreeEntries - shown;
          if (room <= 0 && entries.length > 0) {
            node.cut = 'cap';
            truncated = true;
            continue;
          }
          node.children = entries.slice(0, room).map((entry) => ({ entry, depth: node.depth + 1 }));
          if (entries.length > room) {
            node.cut = 'partial';
            truncated = true;
          }
          shown += node.children.length;
          next.push(...node.children);
        }
        level = next;
      }
      const lines: string[] = [];
      const entries: TreeEntry[] = [];
      const render = (nodes: Node[], indent: string): void => {
        for (const node of nodes) {
          const { entry } = node;
          const type = entry.isSymlink ? 'symlink' : entry.isDirectory ? 'directory' : entry.isFile ? 'file' : 'other';
          const total = totalOf(node);
          if (type === 'directory') {
            const note =
              node.cut === 'depth'
                ? ' …'
                : node.cut === 'cap'
                  ? ' (not listed)'
                  : node.cut === 'partial'
                    ? ' (listed in part)'
                    : total === undefined
                      ? ''
                      : `  ${formatBytes(total)}`;
            lines.push(`${indent}${entry.name}/${note}`);
            entries.push({
              path: entry.path,
              type,
              expanded: node.cut === undefined,
              ...(total === undefined ? {} : { sizeBytes: total }),
            });
            if (node.children !== undefined) render(node.children, `${indent}  `);
          } else {
            lines.push(
              `${indent}${entry.name}${type === 'symlink' ? '@' : ''}${node.size === undefined ? '' : `  ${formatBytes(node.size)}`}`,
            );
            entries.push({ path: entry.path, type, ...(node.size === undefined ? {} : { sizeBytes: node.size }) });
          }
        }
      };
      render(top, '  ');
      const notes: string[] = [];
      if (lines.some((line) => line.endsWith(' …')))
        notes.push(`Directories ending in "…" are deeper than depth ${maxDepth}: call directory_tree on them, or with a larger depth.`);
      if (truncated)
        notes.push(
          `Cut at ${limits.maxTreeEntries} entries: not everything is shown. Call directory_tree on a subdirectory, or with a smaller depth.`,
        );
      const header =
        roots.length === 0 ? `${base} is an empty directory.` : `${base} (${count(entries.length, 'entry', 'entries')} shown):`;
      return ok([header, ...lines, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n'), {
        path: base,
        depth: maxDepth,
        entries,
        truncated,
      });
    }),
  });
}

function isDir(entry: ListEntry): boolean {
  return entry.isDirectory && !entry.isSymlink;
}

/** Stats the plain files of one level concurrently (a host backend overlaps the calls). */
async function sizeFiles(filesystem: Workspace, nodes: Node[]): Promise<void> {
  await Promise.all(
    nodes
      .filter((node) => node.entry.isFile && !node.entry.isSymlink)
      .map(async (node) => {
        node.size = (await filesystem.stat(node.entry.path)).sizeBytes;
      }),
  );
}

/** A file's size, or the total under a directory listed whole to the bottom; `undefined` when not known. */
function totalOf(node: Node): number | undefined {
  if (!node.entry.isDirectory || node.entry.isSymlink) return node.size ?? 0;
  if (node.children === undefined || node.cut !== undefined) return undefined;
  let sum = 0;
  for (const child of node.children) {
    const size = totalOf(child);
    if (size === undefined) return undefined;
    sum += size;
  }
  return sum;
}
