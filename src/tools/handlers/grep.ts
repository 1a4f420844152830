import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import { defineTool } from '../../session/define-tool.js';
import { count, cutLine, gitignoreAware, guard, ignoredNote, includeIgnoredParam, ok, pathParam, type ToolDeps } from './shared.js';

export function grepTool({ limits }: ToolDeps) {
  return defineTool({
    name: 'grep',
    description:
      'Search file contents with a JavaScript regular expression (Unicode mode). Returns "path:line: text" for the first match on each matching line, sorted by path and line. ' +
      `At most max_matches results (default ${limits.defaultGrepMatches}, up to ${limits.maxGrepMatches}); the result says when more exist. Binary files are skipped, and so are files .gitignore ignores unless include_ignored is true.`,
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
      include_ignored: includeIgnoredParam,
    }),
    handler: guard('grep', async (params, { filesystem }) => {
      const { pattern, path, glob: fileGlob, max_matches: maxMatches, ignore_case: ignoreCase, include_ignored: includeIgnored } = params;
      const gitignore = gitignoreAware(includeIgnored);
      const cap = Math.min(maxMatches ?? limits.defaultGrepMatches, limits.maxGrepMatches);
      const base = path ?? '/';
      const matches = await filesystem.grep(pattern, {
        path: base,
        maxMatches: cap + 1,
        ignoreCase: ignoreCase === true,
        ...(fileGlob === undefined ? {} : { glob: fileGlob }),
        ...gitignore.options,
      });
      const ignored = gitignore.skipped();
      const where = displayPath(normalizePath(base));
      if (matches.length === 0) {
        const missing = where !== '/' && !(await filesystem.exists(base));
        return ok(
          `No matches for ${JSON.stringify(pattern)} under ${where}${fileGlob === undefined ? '' : ` in files matching ${JSON.stringify(fileGlob)}`}.${missing ? ` Note: ${where} does not exist.` : ''}${ignoredNote(ignored)}`,
          { matches: [], truncated: false, ignored },
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
      return ok(`${header}\n${lines.join('\n')}${ignoredNote(ignored)}`, {
        ignored,
        matches: shown.map((m) => ({ path: m.path, lineNumber: m.lineNumber, lineContent: cutLine(m.lineContent, limits.maxLineChars) })),
        truncated,
      });
    }),
  });
}

/** A window of a long line around its match. */
function excerpt(line: string, start: number, end: number, max: number): string {
  if (line.length <= max) return line;
  const from = Math.max(0, Math.min(start - Math.floor((max - (end - start)) / 2), line.length - max));
  const to = Math.min(line.length, from + max);
  return `${from > 0 ? '…' : ''}${line.slice(from, to)}${to < line.length ? '…' : ''}`;
}
