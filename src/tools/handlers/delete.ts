import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import { defineTool } from '../../session/define-tool.js';
import { trackingKey } from '../read-tracker.js';
import { changes, guard, ok, pathParam, type ToolDeps } from './shared.js';

export function deleteTool({ tracker }: ToolDeps) {
  return defineTool({
    name: 'delete',
    annotations: changes(true, true),
    description: 'Delete a file, a symbolic link (never its target) or a directory. A non-empty directory needs recursive: true.',
    parameters: z.object({
      path: pathParam('File or directory to delete'),
      recursive: z.boolean().optional().describe('Delete a directory with everything in it. Default false.'),
    }),
    handler: guard('delete', async ({ path, recursive }, context) => {
      const { filesystem } = context;
      const stat = await filesystem.stat(path).catch(() => undefined);
      await filesystem.delete(path, { recursive: recursive === true });
      const target = displayPath(normalizePath(path));
      tracker.forget(trackingKey(context), target);
      const kind = stat === undefined ? '' : stat.isSymlink ? 'link ' : stat.isDirectory ? 'directory ' : '';
      return ok(`Deleted ${kind}${target}.`, { path: target });
    }),
  });
}
