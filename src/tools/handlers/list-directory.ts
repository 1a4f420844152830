import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import type { ListEntry } from '../../workspace/types.js';
import { defineTool } from '../../session/define-tool.js';
import { count, guard, ok, pathParam, READ_ONLY, type ToolDeps } from './shared.js';

export function listDirectoryTool({ limits }: ToolDeps) {
  return defineTool({
    name: 'list_directory',
    annotations: READ_ONLY,
    description: 'List the immediate children of a directory, sorted by name. Directories end with "/", symbolic links with "@".',
    parameters: z.object({ path: pathParam('Directory to list').optional() }),
    handler: guard('list_directory', async ({ path }, { filesystem }) => {
      const target = path ?? '/';
      const entries = await filesystem.list(target);
      const shown = displayPath(normalizePath(target));
      if (entries.length === 0) return ok(`${shown} is an empty directory.`, { path: shown, entries: [] });
      const visible = entries.slice(0, limits.maxListEntries);
      const lines = visible.map(formatEntry);
      const more = entries.length - visible.length;
      if (more > 0) lines.push(`... and ${more} more entries not shown (use glob with a pattern to narrow the listing).`);
      return ok(`${shown} (${count(entries.length, 'entry', 'entries')}):\n${lines.join('\n')}`, {
        path: shown,
        entries: visible.map((e) => ({ name: e.name, path: e.path, type: entryType(e) })),
        truncated: more > 0,
      });
    }),
  });
}

function entryType(entry: ListEntry): 'file' | 'directory' | 'symlink' | 'other' {
  if (entry.isSymlink) return 'symlink';
  if (entry.isDirectory) return 'directory';
  return entry.isFile ? 'file' : 'other';
}

function formatEntry(entry: ListEntry): string {
  if (entry.isSymlink)
    return `${entry.name}@${entry.isDirectory ? ' (link to a directory)' : entry.isFile ? '' : ' (link leading outside the workspace)'}`;
  if (entry.isDirectory) return `${entry.name}/`;
  return entry.name;
}
