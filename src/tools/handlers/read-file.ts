import { z } from 'zod';
import { lineWindow } from '../../workspace/text.js';
import { defineTool } from '../../session/define-tool.js';
import { trackingKey } from '../read-tracker.js';
import { formatNotes, readTextFile } from '../text-file.js';
import { count, cutLine, encodingParam, guard, ok, pathParam, type ToolDeps } from './shared.js';

export function readFileTool({ limits, tracker }: ToolDeps) {
  return defineTool({
    name: 'read_file',
    description:
      `Read a text file. Returns its lines numbered from 1 ("   12\\tline text"); the numbers are not part of the file. ` +
      `At most ${limits.maxReadLines} lines (and ${limits.maxReadChars} characters) per call; when more exist the result says which offset to read on from.`,
    parameters: z.object({
      path: pathParam('File to read'),
      offset: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('Line number to start from, 1-based as in the numbered output (0 also means the first line). Default 1.'),
      limit: z.number().int().min(1).optional().describe(`Most lines to return. Default and maximum ${limits.maxReadLines}.`),
      encoding: encodingParam.optional(),
    }),
    handler: guard('read_file', async ({ path, offset, limit, encoding }, context) => {
      const first = Math.max(1, offset ?? 1);
      const wanted = Math.min(limit ?? limits.maxReadLines, limits.maxReadLines);
      const file = await readTextFile(context.filesystem, path, encoding);
      const result = { path: file.path, ...lineWindow(file.shown, first - 1, wanted) };
      tracker.markSeen(trackingKey(context), file.path, file.bytes);
      if (result.totalLines === 0)
        return ok(`${result.path} is empty (0 lines).`, { path: result.path, totalLines: 0, startLine: 1, endLine: 0, truncated: false });
      if (first > result.totalLines) {
        return ok(
          `${result.path} has ${count(result.totalLines, 'line')}; offset ${first} is past the end. Read from offset 1 to see it.`,
          {
            path: result.path,
            totalLines: result.totalLines,
            startLine: first,
            endLine: first - 1,
            truncated: false,
          },
        );
      }
      const lines = result.content.split('\n');
      const numbered: string[] = [];
      let chars = 0;
      let cutLines = 0;
      for (const [index, line] of lines.entries()) {
        const shown = cutLine(line, limits.maxLineChars);
        if (numbered.length > 0 && chars + shown.length > limits.maxReadChars) break;
        if (shown !== line) cutLines += 1;
        chars += shown.length + 1;
        numbered.push(`${String(first + index).padStart(6)}\t${shown}`);
      }
      const endLine = first + numbered.length - 1;
      const truncated = endLine < result.totalLines;
      let text = numbered.join('\n');
      const notes: string[] = formatNotes(file);
      if (truncated) {
        notes.push(
          `Showing lines ${first}-${endLine} of ${result.totalLines}. To read on, call read_file with path ${JSON.stringify(result.path)} and offset ${endLine + 1}.`,
        );
      } else if (first > 1) {
        notes.push(`Showing lines ${first}-${endLine} of ${result.totalLines} (end of file).`);
      }
      if (cutLines > 0)
        notes.push(
          `${count(cutLines, 'line')} longer than ${limits.maxLineChars} characters ${cutLines === 1 ? 'was' : 'were'} cut; use grep to find text in ${cutLines === 1 ? 'it' : 'them'}.`,
        );
      if (notes.length > 0) text += `\n\n${notes.join('\n')}`;
      return ok(text, {
        path: result.path,
        totalLines: result.totalLines,
        startLine: first,
        endLine,
        truncated,
        encoding: file.decoded.encoding,
        lineEndings: file.style,
      });
    }),
  });
}
