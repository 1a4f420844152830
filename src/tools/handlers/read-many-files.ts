import { z } from 'zod';
import { displayInput } from '../../workspace/paths.js';
import { defineTool } from '../../session/define-tool.js';
import { failureFromError } from '../failure.js';
import { trackingKey } from '../read-tracker.js';
import { readTextFile } from '../text-file.js';
import { numberedWindow, type WindowValue } from './numbered.js';
import { count, encodingParam, guard, ok, pathParam, READ_ONLY, type ToolDeps } from './shared.js';

/** Below this many characters left in the call's budget, a further file is not started (it would show a line or two). */
const MIN_FILE_BUDGET = 200;

/** One file of a `read_many_files` result: what `read_file` returns for it, or why it could not be read. */
export type ReadManyEntry = ({ ok: true } & WindowValue) | { ok: false; path: string; error: string; code?: string };

/**
 * `read_many_files`: several text files in one call, each shown as `read_file` shows it (numbered lines,
 * same notes) under a `==> path <==` header. Their text shares one budget (`maxReadChars`); a file that
 * does not fit is cut where `read_file` would cut it and says where to read on, and files after the budget
 * is spent are named, not read. A file that cannot be read (missing, binary, a directory) is an error for
 * that file only: the call succeeds with what it could read, and every file read counts as seen.
 */
export function readManyFilesTool({ limits, tracker }: ToolDeps) {
  return defineTool({
    name: 'read_many_files',
    annotations: READ_ONLY,
    description:
      `Read several text files in one call (at most ${limits.maxReadManyFiles}), each as read_file shows it under a "==> path <==" header. ` +
      `Together they return at most ${limits.maxReadChars} characters; a file that does not fit says where to read on with read_file. ` +
      'A file that cannot be read gets its own error line; the others are still read.',
    parameters: z.object({
      paths: z.array(pathParam('A file to read')).min(1).max(limits.maxReadManyFiles).describe('Files to read, in the order to show them.'),
      encoding: encodingParam.optional(),
    }),
    handler: guard('read_many_files', async ({ paths, encoding }, context) => {
      const key = trackingKey(context);
      const unique = [...new Set(paths)];
      // Read concurrently (a host backend overlaps the I/O), show in order.
      const loaded = await Promise.all(
        unique.map((path) =>
          readTextFile(context.filesystem, path, encoding).then(
            (file) => ({ path, file }),
            (error: unknown) => ({ path, error }),
          ),
        ),
      );
      let budget = limits.maxReadChars;
      const sections: string[] = [];
      const files: ReadManyEntry[] = [];
      const skipped: string[] = [];
      for (const item of loaded) {
        if ('error' in item) {
          const failed = failureFromError('read_file', item.error, context.filesystem);
          const shown = displayInput(item.path) ?? '?';
          const code = (failed.value as { code?: string } | undefined)?.code;
          sections.push(`==> ${shown} <==\n${failed.message}`);
          files.push({ ok: false, path: shown, error: failed.message, ...(code === undefined ? {} : { code }) });
          continue;
        }
        if (budget < MIN_FILE_BUDGET) {
          skipped.push(item.file.path);
          continue;
        }
        tracker.markSeen(key, item.file.path, item.file.bytes);
        const { text, value } = numberedWindow(item.file, {}, limits, budget);
        budget -= text.length;
        sections.push(`==> ${item.file.path} <==\n${text}`);
        files.push({ ok: true, ...value });
      }
      const read = files.filter((f) => f.ok).length;
      const failedCount = files.length - read;
      const header = `Read ${count(read, 'file')}${failedCount > 0 ? `; ${failedCount} could not be read` : ''}${skipped.length > 0 ? `; ${skipped.length} not read` : ''}.`;
      let message = `${header}\n\n${sections.join('\n\n')}`;
      if (skipped.length > 0)
        message += `\n\nNot read (this call's ${limits.maxReadChars}-character budget is used up): ${skipped.join(', ')}. Read them in another call.`;
      return ok(message, { files, notRead: skipped });
    }),
  });
}
