import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import { defineTool } from '../../session/define-tool.js';
import { trackingKey } from '../read-tracker.js';
import { changes, guard, ok, pathParam, type ToolDeps } from './shared.js';

const transferParams = {
  source: pathParam('Path to move or copy'),
  destination: pathParam('New path (the full target path, not the directory to put it in)'),
  overwrite: z.boolean().optional().describe('Replace an existing destination of the same kind. Default false.'),
};

export function moveTool({ tracker }: ToolDeps) {
  return defineTool({
    name: 'move',
    annotations: changes(true, false),
    description: 'Move or rename a file, directory or link. destination is the full new path; it must not exist unless overwrite is true.',
    parameters: z.object(transferParams),
    handler: guard('move', async ({ source, destination, overwrite }, context) => {
      const { filesystem } = context;
      await filesystem.rename(source, destination, { overwrite: overwrite === true });
      const from = displayPath(normalizePath(source));
      const to = displayPath(normalizePath(destination));
      tracker.move(trackingKey(context), from, to);
      return ok(`Moved ${from} to ${to}.`, { source: from, destination: to });
    }),
  });
}

export function copyTool({ tracker }: ToolDeps) {
  return defineTool({
    name: 'copy',
    annotations: changes(true, true),
    description:
      'Copy a file, link or (with recursive: true) a directory. destination is the full new path; it must not exist unless overwrite is true.',
    parameters: z.object({
      ...transferParams,
      recursive: z.boolean().optional().describe('Required to copy a directory. Default false.'),
    }),
    handler: guard('copy', async ({ source, destination, overwrite, recursive }, context) => {
      const { filesystem } = context;
      await filesystem.copy(source, destination, { overwrite: overwrite === true, recursive: recursive === true });
      const from = displayPath(normalizePath(source));
      const to = displayPath(normalizePath(destination));
      tracker.move(trackingKey(context), from, to, true);
      return ok(`Copied ${from} to ${to}.`, { source: from, destination: to });
    }),
  });
}
