import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import { defineTool } from '../../session/define-tool.js';
import { changes, guard, ok, pathParam } from './shared.js';

export function mkdirTool() {
  return defineTool({
    name: 'mkdir',
    annotations: changes(false, true),
    description: 'Create a directory and any missing parents. Succeeds if it already exists.',
    parameters: z.object({ path: pathParam('Directory to create') }),
    handler: guard('mkdir', async ({ path }, { filesystem }) => {
      const existed = await filesystem.exists(path);
      await filesystem.mkdir(path, { parents: true, existOk: true });
      const target = displayPath(normalizePath(path));
      return ok(existed ? `Directory ${target} already exists.` : `Created directory ${target}.`, { path: target, created: !existed });
    }),
  });
}
