import { z } from 'zod';
import { normalizePath, displayPath } from '../workspace/paths.js';
import { lineWindow } from '../workspace/text.js';
import { applyTextEdits } from '../text/edit.js';
import { describeNearMiss, type NearMiss } from '../text/near-miss.js';
import type { ListEntry, WriteMode } from '../workspace/types.js';
import { defineTool } from '../session/define-tool.js';
import type { Tool, ToolContext, ToolResult } from '../session/types.js';
import { failure, failureFromError } from './failure.js';
import { shellTool } from '../shell/shell-tool.js';
import { resolveToolsOptions, type WorkspaceToolsOptions } from './options.js';
import { ReadTracker, trackingKey } from './read-tracker.js';
import { asTextFile, encodeForWrite, formatNotes, keptFormat, readTextFile, type TextFile } from './text-file.js';

/** The names of the tools `workspaceTools()` returns, in order. */
export const WORKSPACE_TOOL_NAMES = [
  'list_directory',
  'read_file',
  'write_file',
  'edit_file',
  'glob',
  'grep',
  'delete',
  'mkdir',
  'move',
  'copy',
  'stat',
] as const;

/** The suite's tools, and `bash` when `shell` is on. */
export type WorkspaceToolName = (typeof WORKSPACE_TOOL_NAMES)[number] | 'bash';

/** A tool of the suite: zod parameters, their JSON Schema, and a handler returning a `ToolResult`. */
export type WorkspaceTool = Tool<z.ZodType, unknown> & { name: WorkspaceToolName };

const encodingParam = z
  .string()
  .min(1)
  .max(40)
  .describe('Text encoding to use instead of the detected one (e.g. "latin1", "shift_jis", "utf-16le"). Rarely needed.');

const pathParam = (what: string) =>
  z.string().describe(`${what}, relative to the workspace root ('/' or '.' is the root; a leading '/' also means the root).`);

/**
 * The agent-facing tool suite. Handlers never throw for a workspace failure: they return a failed
 * `ToolResult` whose message starts with `Error [CODE]:` and says how to recover, and whose `value` is a
 * {@link ToolFailure}. Run them through `session.runTool` so that a failed call is rolled back.
 */
export function workspaceTools(options: WorkspaceToolsOptions = {}): WorkspaceTool[] {
  const limits = resolveToolsOptions(options);
  const tracker = new ReadTracker(limits);

  const listDirectory = defineTool({
    name: 'list_directory',
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

  const readFile = defineTool({
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

  const writeFile = defineTool({
    name: 'write_file',
    description:
      `Write a text file, creating missing parent directories. mode 'overwrite' (default) replaces the file, 'create' fails if it exists, 'append' adds to the end. ` +
      `At most ${limits.maxWriteChars} characters per call: write larger files in parts with mode 'append'.`,
    parameters: z.object({
      path: pathParam('File to write'),
      content: z.string().describe('The full text to write (or to append).'),
      mode: z.enum(['overwrite', 'create', 'append']).optional().describe("'overwrite' (default), 'create' or 'append'."),
      encoding: encodingParam.optional(),
    }),
    handler: guard('write_file', async ({ path, content, mode, encoding }, context) => {
      const { filesystem } = context;
      const writeMode: WriteMode = mode ?? 'overwrite';
      const target = displayPath(normalizePath(path));
      if (content.length > limits.maxWriteChars) {
        return failure(
          'EFBIG',
          `content is ${content.length} characters; one write_file call may carry at most ${limits.maxWriteChars}. Nothing was written. ` +
            `Write the first part with write_file, then add the rest in further calls with mode 'append'.`,
          { path: target, reason: 'too_large' },
        );
      }
      const existed = await filesystem.exists(path);
      let before: Uint8Array | undefined;
      let existing: TextFile | undefined;
      if (existed && writeMode !== 'create') {
        const refused = tracker.refuseUnread(trackingKey(context), target, 'write_file');
        if (refused !== undefined) return refused;
        before = (await filesystem.readBytes(path)).content;
        const stale = tracker.refuseStale(trackingKey(context), target, before, 'write_file');
        if (stale !== undefined) return stale;
        existing = asTextFile(target, before, encoding);
      }
      const bytes = encodeForWrite(content, existing, { mode: writeMode, preserve: limits.preserveLineEndings, encoding, path: target });
      const result = await filesystem.writeBytes(path, bytes, { mode: writeMode });
      tracker.markSeen(trackingKey(context), result.path, writeMode === 'append' && before !== undefined ? concat(before, bytes) : bytes);
      const size = count(result.bytesWritten, 'byte');
      const kept = keptFormat(existing, bytes);
      const message =
        writeMode === 'append'
          ? `Appended ${size} to ${result.path}${existed ? '' : ' (new file)'}${kept}.`
          : `${existed ? 'Overwrote' : 'Created'} ${result.path} (${size}${kept}).`;
      return ok(message, { path: result.path, bytesWritten: result.bytesWritten, mode: writeMode, created: !existed });
    }),
  });

  const editFile = defineTool({
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

  const glob = defineTool({
    name: 'glob',
    description:
      `Find files by glob pattern (picomatch: "**/*.ts" matches at any depth, "*" stays within one directory, {a,b} alternatives). ` +
      `Paths are returned relative to the workspace root, sorted; at most ${limits.maxGlobResults}. Names starting with "." match only when the pattern spells the dot.`,
    parameters: z.object({
      pattern: z.string().min(1).describe('Glob pattern, relative to path, e.g. "src/**/*.ts".'),
      path: pathParam('Directory the pattern is relative to (default the root)').optional(),
    }),
    handler: guard('glob', async ({ pattern, path }, { filesystem }) => {
      const base = path ?? '/';
      const matches = await filesystem.glob(pattern, { path: base });
      const where = displayPath(normalizePath(base));
      if (matches.length === 0) {
        const missing = where !== '/' && !(await filesystem.exists(base));
        return ok(`No files match ${JSON.stringify(pattern)} under ${where}.${missing ? ` Note: ${where} does not exist.` : ''}`, {
          paths: [],
          total: 0,
          truncated: false,
        });
      }
      const shown = matches.slice(0, limits.maxGlobResults).map((m) => m.path);
      const truncated = matches.length > shown.length;
      const header = truncated
        ? `${matches.length} files match ${JSON.stringify(pattern)}; showing the first ${shown.length}. Narrow the pattern or the path to see the rest.`
        : `${count(matches.length, 'file')} ${matches.length === 1 ? 'matches' : 'match'} ${JSON.stringify(pattern)}:`;
      return ok(`${header}\n${shown.join('\n')}`, { paths: shown, total: matches.length, truncated });
    }),
  });

  const grep = defineTool({
    name: 'grep',
    description:
      'Search file contents with a JavaScript regular expression (Unicode mode). Returns "path:line: text" for the first match on each matching line, sorted by path and line. ' +
      `At most max_matches results (default ${limits.defaultGrepMatches}, up to ${limits.maxGrepMatches}); the result says when more exist. Binary files are skipped.`,
    parameters: z.object({
      pattern: z
        .string()
        .min(1)
        .describe('Regular expression, e.g. "function\\\\s+main". Escape ( [ { . * + ? | ^ $ \\\\ to match them literally.'),
      path: pathParam('File or directory to search (default the root)').optional(),
      glob: z.string().min(1).optional().describe('Only search files matching this glob, relative to path, e.g. "**/*.ts".'),
      max_matches: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe(`Most matches to return (default ${limits.defaultGrepMatches}, at most ${limits.maxGrepMatches}).`),
      ignore_case: z.boolean().optional().describe('Case-insensitive search. Default false.'),
    }),
    handler: guard('grep', async ({ pattern, path, glob: fileGlob, max_matches: maxMatches, ignore_case: ignoreCase }, { filesystem }) => {
      const cap = Math.min(maxMatches ?? limits.defaultGrepMatches, limits.maxGrepMatches);
      const base = path ?? '/';
      const matches = await filesystem.grep(pattern, {
        path: base,
        maxMatches: cap + 1,
        ignoreCase: ignoreCase === true,
        ...(fileGlob === undefined ? {} : { glob: fileGlob }),
      });
      const where = displayPath(normalizePath(base));
      if (matches.length === 0) {
        const missing = where !== '/' && !(await filesystem.exists(base));
        return ok(
          `No matches for ${JSON.stringify(pattern)} under ${where}${fileGlob === undefined ? '' : ` in files matching ${JSON.stringify(fileGlob)}`}.${missing ? ` Note: ${where} does not exist.` : ''}`,
          {
            matches: [],
            truncated: false,
          },
        );
      }
      const shown = matches.slice(0, cap);
      const truncated = matches.length > cap;
      const lines = shown.map(
        (m) => `${m.path}:${m.lineNumber}: ${excerpt(m.lineContent, m.matchStart, m.matchEnd, Math.min(limits.maxLineChars, 400))}`,
      );
      const header = truncated
        ? `More than ${cap} matches; showing the first ${cap}. Narrow the search with path or glob${cap < limits.maxGrepMatches ? `, or raise max_matches (up to ${limits.maxGrepMatches})` : ''}.`
        : `${count(shown.length, 'match', 'matches')}:`;
      return ok(`${header}\n${lines.join('\n')}`, {
        matches: shown.map((m) => ({ path: m.path, lineNumber: m.lineNumber, lineContent: cutLine(m.lineContent, limits.maxLineChars) })),
        truncated,
      });
    }),
  });

  const deleteTool = defineTool({
    name: 'delete',
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

  const mkdir = defineTool({
    name: 'mkdir',
    description: 'Create a directory and any missing parents. Succeeds if it already exists.',
    parameters: z.object({ path: pathParam('Directory to create') }),
    handler: guard('mkdir', async ({ path }, { filesystem }) => {
      const existed = await filesystem.exists(path);
      await filesystem.mkdir(path, { parents: true, existOk: true });
      const target = displayPath(normalizePath(path));
      return ok(existed ? `Directory ${target} already exists.` : `Created directory ${target}.`, { path: target, created: !existed });
    }),
  });

  const transferParams = {
    source: pathParam('Path to move or copy'),
    destination: pathParam('New path (the full target path, not the directory to put it in)'),
    overwrite: z.boolean().optional().describe('Replace an existing destination of the same kind. Default false.'),
  };

  const move = defineTool({
    name: 'move',
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

  const copy = defineTool({
    name: 'copy',
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

  const stat = defineTool({
    name: 'stat',
    description: 'Show what a path is: file, directory or link, its size in bytes, modification time and MIME type when known.',
    parameters: z.object({ path: pathParam('Path to inspect') }),
    handler: guard('stat', async ({ path }, { filesystem }) => {
      const s = await filesystem.stat(path);
      const kind = s.isDirectory ? 'directory' : s.isFile ? 'file' : 'other';
      const parts = [`${s.path}: ${s.isSymlink ? `symbolic link to a ${kind}` : kind}`];
      if (s.isFile) parts.push(count(s.sizeBytes, 'byte'));
      if (s.mimeType !== undefined && s.isFile) parts.push(s.mimeType);
      if (s.modifiedAt !== undefined) parts.push(`modified ${s.modifiedAt.toISOString()}`);
      if (s.version !== undefined) parts.push(`version ${s.version}`);
      return ok(parts.join(', '), {
        path: s.path,
        type: kind,
        isSymlink: s.isSymlink,
        sizeBytes: s.sizeBytes,
        ...(s.mimeType === undefined ? {} : { mimeType: s.mimeType }),
        ...(s.modifiedAt === undefined ? {} : { modifiedAt: s.modifiedAt.toISOString() }),
        ...(s.createdAt === undefined ? {} : { createdAt: s.createdAt.toISOString() }),
        ...(s.version === undefined ? {} : { version: s.version }),
      });
    }),
  });

  const shell = limits.shell === false ? [] : [shellTool({ mode: limits.shell === 'host' ? 'host' : 'interpreter' })];
  return [listDirectory, readFile, writeFile, editFile, glob, grep, deleteTool, mkdir, move, copy, stat, ...shell] as WorkspaceTool[];

  // ---- helpers that close over `limits` and `tracker` ----

  function guard<P>(tool: WorkspaceToolName, run: (params: P, context: ToolContext) => Promise<ToolResult>) {
    return async (params: P, context: ToolContext): Promise<ToolResult> => {
      try {
        return await run(params, context);
      } catch (error) {
        return failureFromError(tool, error, context.filesystem);
      }
    };
  }
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.byteLength + second.byteLength);
  joined.set(first);
  joined.set(second, first.byteLength);
  return joined;
}

function ok<T>(message: string, value: T): ToolResult<T> {
  return { success: true, message, value };
}

function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
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

function cutLine(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [line cut: ${line.length} characters]`;
}

/** A window of a long line around its match. */
function excerpt(line: string, start: number, end: number, max: number): string {
  if (line.length <= max) return line;
  const from = Math.max(0, Math.min(start - Math.floor((max - (end - start)) / 2), line.length - max));
  const to = Math.min(line.length, from + max);
  return `${from > 0 ? '…' : ''}${line.slice(from, to)}${to < line.length ? '…' : ''}`;
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
