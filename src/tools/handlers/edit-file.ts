import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import { applyTextEdits } from '../../text/edit.js';
import { describeNearMiss, type NearMiss } from '../../text/near-miss.js';
import { defineTool } from '../../session/define-tool.js';
import { failure } from '../failure.js';
import { trackingKey } from '../read-tracker.js';
import { encodeForWrite, keptFormat, readTextFile } from '../text-file.js';
import { encodingParam, guard, ok, pathParam, type ToolDeps } from './shared.js';

export function editFileTool({ limits, tracker }: ToolDeps) {
  return defineTool({
    name: 'edit_file',
    description:
      'Replace an exact piece of text in a file. old_string must match the file exactly (whitespace and indentation included) and, unless replace_all is true, occur exactly once: include enough surrounding lines to make it unique. Read the file first to copy the exact text.',
    parameters: z.object({
      path: pathParam('File to edit'),
      old_string: z.string().describe('The exact text to replace (without read_file line numbers).'),
      new_string: z.string().describe('The text to put in its place.'),
      replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one. Default false.'),
      encoding: encodingParam.optional(),
    }),
    handler: guard(
      'edit_file',
      async ({ path, old_string: oldString, new_string: newString, replace_all: replaceAll, encoding }, context) => {
        const { filesystem } = context;
        const target = displayPath(normalizePath(path));
        if (oldString === '') {
          return failure('EINVAL', 'old_string is empty. To create a file or replace its whole content, use write_file.', {
            path: target,
            reason: 'no_match',
          });
        }
        if (oldString === newString) {
          return failure('EINVAL', 'old_string and new_string are identical, so the edit would change nothing.', {
            path: target,
            reason: 'no_change',
          });
        }
        if (newString.length > limits.maxWriteChars) {
          return failure(
            'EFBIG',
            `new_string is ${newString.length} characters; the limit is ${limits.maxWriteChars}. Make the edit in smaller pieces.`,
            {
              path: target,
              reason: 'too_large',
            },
          );
        }
        const file = await readTextFile(filesystem, path, encoding);
        const key = trackingKey(context);
        const refused = tracker.refuseUnread(key, file.path, 'edit_file') ?? tracker.refuseStale(key, file.path, file.bytes, 'edit_file');
        if (refused !== undefined) return refused;

        const outcome = applyTextEdits(file.decoded.text, [{ oldString, newString, replaceAll: replaceAll === true }]);
        if (!outcome.ok && outcome.reason === 'no_match')
          return failure('EINVAL', noMatchMessage(file.path, file.shown, oldString, outcome.nearMiss), {
            path: file.path,
            reason: 'no_match',
          });
        if (!outcome.ok) {
          const lines = outcome.lines.slice(0, 10);
          const where = `line${outcome.lines.length > 1 ? 's' : ''} ${lines.join(', ')}${outcome.lines.length > lines.length ? ', ...' : ''}`;
          return failure(
            'EINVAL',
            `old_string occurs ${outcome.count} times in ${file.path} (at ${where}), so the edit is ambiguous. Nothing was changed. ` +
              'Include more surrounding lines in old_string to make it unique, or pass replace_all: true to replace every occurrence.',
            { path: file.path, reason: 'ambiguous' },
          );
        }
        const bytes = encodeForWrite(outcome.text, file, { mode: 'overwrite', preserve: false, path: file.path });
        await filesystem.writeBytes(path, bytes, { mode: 'overwrite' });
        tracker.markSeen(key, file.path, bytes);
        const replaced = outcome.replacements[0] as number;
        const first = outcome.firstLines[0] as number;
        const message =
          replaced === 1
            ? `Replaced 1 occurrence in ${file.path} (at line ${first}${keptFormat(file, bytes)}).`
            : `Replaced ${replaced} occurrences in ${file.path}${keptFormat(file, bytes)}.`;
        return ok(message, { path: file.path, replacements: replaced, firstLine: first });
      },
    ),
  });
}

function noMatchMessage(path: string, text: string, oldString: string, nearMiss: NearMiss | undefined): string {
  let hint = 'Read the file with read_file and copy the exact text, including whitespace and indentation, without the line-number prefix.';
  if (/^\s*\d+\t/m.test(oldString)) hint = 'old_string seems to include read_file line-number prefixes ("   12\\t"); leave them out.';
  else if (oldString.trim() !== oldString && text.includes(oldString.trim())) {
    hint = 'The text matches when its leading and trailing whitespace is removed; fix the whitespace in old_string.';
  } else if (squash(text).includes(squash(oldString))) {
    hint =
      'The text matches only when whitespace is ignored: the indentation or spacing differs. Read the file with read_file and copy the exact text.';
  }
  const closest = nearMiss === undefined ? '' : `\n${describeNearMiss(nearMiss)}`;
  return `old_string was not found in ${path}. Nothing was changed. ${hint}${closest}`;
}

function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
