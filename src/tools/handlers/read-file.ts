import { z } from 'zod';
import { defineTool } from '../../session/define-tool.js';
import { failure } from '../failure.js';
import { trackingKey } from '../read-tracker.js';
import { readTextFile } from '../text-file.js';
import { numberedWindow } from './numbered.js';
import { encodingParam, guard, ok, pathParam, READ_ONLY, type ToolDeps } from './shared.js';

export function readFileTool({ limits, tracker }: ToolDeps) {
  return defineTool({
    name: 'read_file',
    annotations: READ_ONLY,
    description:
      `Read a text file. Returns its lines numbered from 1 ("   12\\tline text"); the numbers are not part of the file. ` +
      `At most ${limits.maxReadLines} lines (and ${limits.maxReadChars} characters) per call; when more exist the result says which offset to read on from. ` +
      'tail: N reads the last N lines instead (for logs).',
    parameters: z.object({
      path: pathParam('File to read'),
      offset: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('Line number to start from, 1-based as in the numbered output (0 also means the first line). Default 1.'),
      limit: z.number().int().min(1).optional().describe(`Most lines to return. Default and maximum ${limits.maxReadLines}.`),
      tail: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe(`Read the last N lines instead of a window from offset (at most ${limits.maxReadLines}). Not with offset or limit.`),
      encoding: encodingParam.optional(),
    }),
    handler: guard('read_file', async ({ path, offset, limit, tail, encoding }, context) => {
      if (tail !== undefined && (offset !== undefined || limit !== undefined))
        return failure('EINVAL', 'pass either tail or offset/limit, not both: tail reads the last N lines of the file.');
      const file = await readTextFile(context.filesystem, path, encoding);
      tracker.markSeen(trackingKey(context), file.path, file.bytes);
      const { text, value } = numberedWindow(file, { first: offset, limit, tail }, limits, limits.maxReadChars);
      return ok(text, value);
    }),
  });
}
