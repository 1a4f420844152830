import { z } from 'zod';
import { normalizePath, displayPath } from '../../workspace/paths.js';
import { defineTool } from '../../session/define-tool.js';
import { count, gitignoreAware, guard, ignoredNote, includeIgnoredParam, ok, pathParam, type ToolDeps } from './shared.js';

export function globTool({ limits }: ToolDeps) {
  return defineTool({
    name: 'glob',
    description:
      `Find files by glob pattern (picomatch: "**/*.ts" matches at any depth, "*" stays within one directory, {a,b} alternatives). ` +
      `Paths are returned relative to the workspace root, sorted; at most ${limits.maxGlobResults}. Names starting with "." match only when the pattern spells the dot. ` +
      'Files that .gitignore ignores are skipped unless include_ignored is true.',
    parameters: z.object({
      pattern: z.string().min(1).describe('Glob pattern, relative to path, e.g. "src/**/*.ts".'),
      path: pathParam('Directory the pattern is relative to (default the root)').optional(),
      include_ignored: includeIgnoredParam,
    }),
    handler: guard('glob', async ({ pattern, path, include_ignored: includeIgnored }, { filesystem }) => {
      const base = path ?? '/';
      const gitignore = gitignoreAware(includeIgnored);
      const matches = await filesystem.glob(pattern, { path: base, ...gitignore.options });
      const ignored = gitignore.skipped();
      const where = displayPath(normalizePath(base));
      if (matches.length === 0) {
        const missing = where !== '/' && !(await filesystem.exists(base));
        return ok(
          `No files match ${JSON.stringify(pattern)} under ${where}.${missing ? ` Note: ${where} does not exist.` : ''}${ignoredNote(ignored)}`,
          { paths: [], total: 0, truncated: false, ignored },
        );
      }
      const shown = matches.slice(0, limits.maxGlobResults).map((m) => m.path);
      const truncated = matches.length > shown.length;
      const header = truncated
        ? `${matches.length} files match ${JSON.stringify(pattern)}; showing the first ${shown.length}. Narrow the pattern or the path to see the rest.`
        : `${count(matches.length, 'file')} ${matches.length === 1 ? 'matches' : 'match'} ${JSON.stringify(pattern)}:`;
      return ok(`${header}\n${shown.join('\n')}${ignoredNote(ignored)}`, { paths: shown, total: matches.length, truncated, ignored });
    }),
  });
}
