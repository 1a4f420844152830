import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import { applyTextEdits, type EditOutcome, type TextEdit } from '../../text/edit.js';
import { describeNearMiss, type NearMiss } from '../../text/near-miss.js';
import { defineTool } from '../../session/define-tool.js';
import type { ToolResult } from '../../session/types.js';
import { failure, type ToolFailure } from '../failure.js';
import { isRefusal, trackingKey } from '../read-tracker.js';
import { encodeForWrite, keptFormat, readTextFile } from '../text-file.js';
import { editDiff } from './edit-diff.js';
import { changes, count, encodingParam, guard, ok, pathParam, type ToolDeps } from './shared.js';

/** Most entries one `edits` list may have: enough for a real refactor of one file, bounded for the model's sake. */
export const MAX_EDITS = 100;

const oldStringParam = z.string().describe('The exact text to replace (without read_file line numbers).');
const newStringParam = z.string().describe('The text to put in its place.');
const replaceAllParam = z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one. Default false.');

/**
 * `edit_file`: one replacement (`old_string`/`new_string`) or several (`edits`, applied in order to the
 * result of the ones before, all or nothing: when one fails nothing is written). `dry_run` returns the
 * unified diff the edit would make and writes nothing. Both forms match across line-ending styles and
 * keep the file's encoding, BOM and line endings (see `applyTextEdits`).
 */
export function editFileTool({ limits, tracker }: ToolDeps) {
  return defineTool({
    name: 'edit_file',
    annotations: changes(true, false),
    description:
      'Replace an exact piece of text in a file. old_string must match the file exactly (whitespace and indentation included) and, unless replace_all is true, occur exactly once: include enough surrounding lines to make it unique. Read the file first to copy the exact text. ' +
      `For several changes to one file, pass edits: [{ old_string, new_string, replace_all? }] instead (at most ${MAX_EDITS}), applied in order, all or nothing. ` +
      'dry_run: true returns the unified diff without writing.',
    parameters: z.object({
      path: pathParam('File to edit'),
      old_string: oldStringParam.optional(),
      new_string: newStringParam.optional(),
      replace_all: replaceAllParam,
      edits: z
        .array(z.object({ old_string: oldStringParam, new_string: newStringParam, replace_all: replaceAllParam }))
        .optional()
        .describe(
          'Several replacements instead of old_string/new_string, applied in order (each to the result of the ones before); if one fails, nothing is written.',
        ),
      dry_run: z.boolean().optional().describe('Return the unified diff of the change without writing it. Default false.'),
      encoding: encodingParam.optional(),
    }),
    handler: guard('edit_file', async (params, context) => {
      const { filesystem } = context;
      const target = displayPath(normalizePath(params.path));
      const form = editsOf(params, target);
      if (!Array.isArray(form)) return form;
      const edits = form;
      const multi = params.edits !== undefined;
      const label = (index: number): string => (multi ? `edits[${index}]: ` : '');
      for (const [index, edit] of edits.entries()) {
        const invalid = checkEdit(edit, target, label(index), limits.maxWriteChars);
        if (invalid !== undefined) return invalid;
      }
      const added = edits.reduce((sum, edit) => sum + edit.newString.length, 0);
      if (added > limits.maxWriteChars)
        return failure(
          'EFBIG',
          `the new_string texts add up to ${added} characters; one edit_file call may carry at most ${limits.maxWriteChars}. Nothing was changed. Split the edits over several calls.`,
          { path: target, reason: 'too_large' },
        );

      const key = trackingKey(context);
      const version = await tracker.versionBeforeRead(key, filesystem, target);
      const file = await readTextFile(filesystem, params.path, params.encoding);
      const refused = tracker.refuseUnread(key, file.path, 'edit_file') ?? tracker.refuseStale(key, file.path, file.bytes, 'edit_file');
      if (refused !== undefined) return refused;

      const outcome = applyTextEdits(file.decoded.text, edits);
      if (!outcome.ok) return refusal(outcome, file.path, file.shown, edits, label(outcome.index), outcome.index > 0);
      const bytes = encodeForWrite(outcome.text, file, { mode: 'overwrite', preserve: false, path: file.path });
      const replacements = outcome.replacements.reduce((sum, n) => sum + n, 0);
      const summary = { path: file.path, replacements, firstLine: outcome.firstLines[0] as number, firstLines: outcome.firstLines };
      if (params.dry_run === true) {
        const diff = editDiff(file.path, file.decoded, outcome.text);
        return ok(
          `Dry run: ${multi ? `${count(edits.length, 'edit')} (${count(replacements, 'replacement')})` : count(replacements, 'replacement')} would change ${file.path}; nothing was written.\n${diff.shown}`,
          { ...summary, dryRun: true, diff: diff.exact },
        );
      }
      const written = await tracker.writeUnchanged(filesystem, file.path, bytes, { mode: 'overwrite' }, version, 'edit_file');
      if (isRefusal(written)) return written;
      tracker.markSeen(key, file.path, bytes);
      const kept = keptFormat(file, bytes);
      let message: string;
      if (multi) {
        message = `Applied ${count(edits.length, 'edit')} to ${file.path} (${count(replacements, 'replacement')}, first at line${outcome.firstLines.length > 1 ? 's' : ''} ${outcome.firstLines.join(', ')}${kept}).`;
      } else {
        message =
          replacements === 1
            ? `Replaced 1 occurrence in ${file.path} (at line ${summary.firstLine}${kept}).`
            : `Replaced ${replacements} occurrences in ${file.path}${kept}.`;
      }
      return ok(message, summary);
    }),
  });
}

type EditParams = {
  old_string?: string | undefined;
  new_string?: string | undefined;
  replace_all?: boolean | undefined;
  edits?: { old_string: string; new_string: string; replace_all?: boolean | undefined }[] | undefined;
};

/** The edits of either form, or a failure when the call mixes them or gives neither. */
function editsOf(params: EditParams, path: string): TextEdit[] | ToolResult<ToolFailure> {
  const single = params.old_string !== undefined || params.new_string !== undefined || params.replace_all !== undefined;
  if (params.edits !== undefined) {
    if (single)
      return failure('EINVAL', 'pass either old_string/new_string/replace_all or edits, not both. Nothing was changed.', { path });
    if (params.edits.length === 0) return failure('EINVAL', 'edits is empty: give at least one { old_string, new_string }.', { path });
    if (params.edits.length > MAX_EDITS)
      return failure('EINVAL', `edits has ${params.edits.length} entries; at most ${MAX_EDITS} per call. Nothing was changed.`, { path });
    return params.edits.map((e) => ({ oldString: e.old_string, newString: e.new_string, replaceAll: e.replace_all === true }));
  }
  if (params.old_string === undefined || params.new_string === undefined)
    return failure('EINVAL', 'give old_string and new_string (or edits: [{ old_string, new_string }] for several changes).', { path });
  return [{ oldString: params.old_string, newString: params.new_string, replaceAll: params.replace_all === true }];
}

function checkEdit(edit: TextEdit, path: string, label: string, maxChars: number): ToolResult<ToolFailure> | undefined {
  if (edit.oldString === '')
    return failure('EINVAL', `${label}old_string is empty. To create a file or replace its whole content, use write_file.`, {
      path,
      reason: 'no_match',
    });
  if (edit.oldString === edit.newString)
    return failure('EINVAL', `${label}old_string and new_string are identical, so the edit would change nothing.`, {
      path,
      reason: 'no_change',
    });
  if (edit.newString.length > maxChars)
    return failure(
      'EFBIG',
      `${label}new_string is ${edit.newString.length} characters; the limit is ${maxChars}. Make the edit in smaller pieces.`,
      { path, reason: 'too_large' },
    );
  return undefined;
}

function refusal(
  outcome: Exclude<EditOutcome, { ok: true }>,
  path: string,
  shown: string,
  edits: readonly TextEdit[],
  label: string,
  afterEarlier: boolean,
): ToolResult<ToolFailure> {
  const none = afterEarlier ? 'Nothing was changed (no edit of this call was applied).' : 'Nothing was changed.';
  const within = afterEarlier ? ' (after the edits before it)' : '';
  const edit = edits[outcome.index] as TextEdit;
  if (outcome.reason === 'no_match')
    return failure('EINVAL', `${label}${noMatchMessage(path + within, shown, edit.oldString, outcome.nearMiss, none)}`, {
      path,
      reason: 'no_match',
    });
  const lines = outcome.lines.slice(0, 10);
  const where = `line${outcome.lines.length > 1 ? 's' : ''} ${lines.join(', ')}${outcome.lines.length > lines.length ? ', ...' : ''}`;
  return failure(
    'EINVAL',
    `${label}old_string occurs ${outcome.count} times in ${path}${within} (at ${where}), so the edit is ambiguous. ${none} ` +
      'Include more surrounding lines in old_string to make it unique, or pass replace_all: true to replace every occurrence.',
    { path, reason: 'ambiguous' },
  );
}

function noMatchMessage(path: string, text: string, oldString: string, nearMiss: NearMiss | undefined, none: string): string {
  let hint = 'Read the file with read_file and copy the exact text, including whitespace and indentation, without the line-number prefix.';
  if (/^\s*\d+\t/m.test(oldString)) hint = 'old_string seems to include read_file line-number prefixes ("   12\\t"); leave them out.';
  else if (oldString.trim() !== oldString && text.includes(oldString.trim())) {
    hint = 'The text matches when its leading and trailing whitespace is removed; fix the whitespace in old_string.';
  } else if (squash(text).includes(squash(oldString))) {
    hint =
      'The text matches only when whitespace is ignored: the indentation or spacing differs. Read the file with read_file and copy the exact text.';
  }
  const closest = nearMiss === undefined ? '' : `\n${describeNearMiss(nearMiss)}`;
  return `old_string was not found in ${path}. ${none} ${hint}${closest}`;
}

function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
