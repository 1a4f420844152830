import { z } from 'zod';

/** Tool-level limits and policies: what one call may carry or return, separate from the protocol's limits. */
export interface WorkspaceToolsOptions {
  /** Most characters (JavaScript string length) `write_file` content or an `edit_file` `new_string` may have. Default 48,000. */
  maxWriteChars?: number;
  /** Lines `read_file` returns when no `limit` is given, and the most it returns at all. Default 2,000. */
  maxReadLines?: number;
  /** Most characters of file text one `read_file` call returns (whole lines; the rest is read on). Default 60,000. */
  maxReadChars?: number;
  /** Lines longer than this are cut in `read_file` and `grep` output. Default 2,000 characters. */
  maxLineChars?: number;
  /** Most paths `glob` lists. Default 200. */
  maxGlobResults?: number;
  /** Matches `grep` returns when no `max_matches` is given. Default 100. */
  defaultGrepMatches?: number;
  /** Most matches `grep` returns whatever `max_matches` says. Default 1,000. */
  maxGrepMatches?: number;
  /** Most entries `list_directory` shows. Default 1,000. */
  maxListEntries?: number;
  /** Most paths one `read_many_files` call takes (their text shares the `maxReadChars` budget). Default 100. */
  maxReadManyFiles?: number;
  /** Largest file `read_media` returns (base64 is a third larger again). Default 5 MiB. */
  maxMediaBytes?: number;
  /** Most entries `directory_tree` shows. Default 500. */
  maxTreeEntries?: number;
  /** Largest file `send_file` sends to the user (its bytes are kept in the session's outbox). Default 32 MiB. */
  maxSendBytes?: number;
  /**
   * Off by default. When on, an existing file must have been read with `read_file` in the same session
   * (workspace) before `write_file` or `edit_file` may change it. Files the tools themselves created or
   * wrote count as read.
   */
  readBeforeWrite?: boolean;
  /**
   * On by default. `write_file` and `edit_file` refuse (`ECONFLICT`, reason `stale`) to change a file the
   * model read when it has changed since, by anyone else: a write would be based on content it never saw.
   * Reading the file again clears it. Files the model never read are governed by `readBeforeWrite`.
   */
  staleWriteGuard?: boolean;
  /** On by default: `write_file` over a file with CRLF line endings writes CRLF when the content has no CR. */
  preserveLineEndings?: boolean;
  /**
   * Adds the `bash` tool (see `shellTool`): `true` runs commands in just-bash over the workspace; `'host'`
   * runs real programs in a host workspace's root (allow-listed; not a security boundary); `'sandbox'` runs
   * real programs in a sandbox on any backend (`session.exec`, docs/programs.md). Default false.
   */
  shell?: boolean | 'host' | 'sandbox';
}

export type ResolvedToolsOptions = Required<WorkspaceToolsOptions>;

export const DEFAULT_TOOLS_OPTIONS: Readonly<ResolvedToolsOptions> = Object.freeze({
  maxWriteChars: 48_000,
  maxReadLines: 2_000,
  maxReadChars: 60_000,
  maxLineChars: 2_000,
  maxGlobResults: 200,
  defaultGrepMatches: 100,
  maxGrepMatches: 1_000,
  maxListEntries: 1_000,
  maxReadManyFiles: 100,
  maxMediaBytes: 5 * 1024 * 1024,
  maxTreeEntries: 500,
  maxSendBytes: 32 * 1024 * 1024,
  readBeforeWrite: false,
  staleWriteGuard: true,
  preserveLineEndings: true,
  shell: false,
});

const positive = z.number().int().positive();

export const WorkspaceToolsOptionsSchema = z.object({
  maxWriteChars: positive.optional(),
  maxReadLines: positive.optional(),
  maxReadChars: positive.optional(),
  maxLineChars: positive.optional(),
  maxGlobResults: positive.optional(),
  defaultGrepMatches: positive.optional(),
  maxGrepMatches: positive.optional(),
  maxListEntries: positive.optional(),
  maxReadManyFiles: positive.optional(),
  maxMediaBytes: positive.optional(),
  maxTreeEntries: positive.optional(),
  maxSendBytes: positive.optional(),
  readBeforeWrite: z.boolean().optional(),
  staleWriteGuard: z.boolean().optional(),
  preserveLineEndings: z.boolean().optional(),
  shell: z.union([z.boolean(), z.literal('host'), z.literal('sandbox')]).optional(),
});

export function resolveToolsOptions(options: WorkspaceToolsOptions = {}): Readonly<ResolvedToolsOptions> {
  const parsed = WorkspaceToolsOptionsSchema.parse(options);
  const defined = Object.fromEntries(Object.entries(parsed).filter(([, v]) => v !== undefined));
  const resolved: ResolvedToolsOptions = { ...DEFAULT_TOOLS_OPTIONS, ...defined };
  resolved.defaultGrepMatches = Math.min(resolved.defaultGrepMatches, resolved.maxGrepMatches);
  return Object.freeze(resolved);
}
