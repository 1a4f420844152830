import { z } from 'zod';
import type { ToolContext, ToolResult } from '../../session/types.js';
import { failureFromError } from '../failure.js';
import type { ResolvedToolsOptions } from '../options.js';
import type { ReadTracker } from '../read-tracker.js';

/** What every handler module builds its tool from: the resolved limits and the suite's one read tracker. */
export interface ToolDeps {
  limits: Readonly<ResolvedToolsOptions>;
  tracker: ReadTracker;
}

export const encodingParam = z
  .string()
  .min(1)
  .max(40)
  .describe('Text encoding to use instead of the detected one (e.g. "latin1", "shift_jis", "utf-16le"). Rarely needed.');

export const pathParam = (what: string) =>
  z.string().describe(`${what}, relative to the workspace root ('/' or '.' is the root; a leading '/' also means the root).`);

/** Wraps a handler so that a thrown workspace error becomes a failed result with a hint for `tool`. */
export function guard<P>(tool: string, run: (params: P, context: ToolContext) => Promise<ToolResult>) {
  return async (params: P, context: ToolContext): Promise<ToolResult> => {
    try {
      return await run(params, context);
    } catch (error) {
      return failureFromError(tool, error, context.filesystem);
    }
  };
}

export function ok<T>(message: string, value: T): ToolResult<T> {
  return { success: true, message, value };
}

export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

export function cutLine(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [line cut: ${line.length} characters]`;
}

export const includeIgnoredParam = z
  .boolean()
  .optional()
  .describe('Also search files that .gitignore ignores (build output, node_modules, ...) and .git/. Default false.');

/**
 * Search options that skip what `.gitignore` ignores unless the model asked for everything, and how many
 * files were skipped once the search is done (for the note that says so).
 */
export function gitignoreAware(includeIgnored: boolean | undefined): {
  options: { respectGitignore: boolean; onIgnored: (count: number) => void };
  skipped: () => number;
} {
  let ignored = 0;
  return { options: { respectGitignore: includeIgnored !== true, onIgnored: (n) => (ignored = n) }, skipped: () => ignored };
}

/** The line that tells the model ignored files were left out, or nothing. */
export function ignoredNote(skipped: number): string {
  if (skipped === 0) return '';
  return `\n(${count(skipped, 'file')} ignored by .gitignore ${skipped === 1 ? 'was' : 'were'} skipped; pass include_ignored: true to include ${skipped === 1 ? 'it' : 'them'}.)`;
}
