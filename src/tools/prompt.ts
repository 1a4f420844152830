import { resolveToolsOptions, type WorkspaceToolsOptions } from './options.js';

export interface WorkspacePromptOptions extends WorkspaceToolsOptions {
  /** Whether calls run through `session.runTool`, so that a failed call is rolled back. Default true. */
  rollback?: boolean;
  /** Whether the workspace is read-only. Default false. */
  readOnly?: boolean;
  /** Extra tools the host offers (for example `snapshot`, `restore`, `diff` over MCP), as name and one line. */
  extraTools?: readonly { name: string; summary: string }[];
}

/**
 * Markdown guidance for a model's system prompt: what the workspace is, the tools, the limits, and that a
 * failed call is rolled back. Pass the same options as to `workspaceTools()` so the limits match.
 */
export function workspacePrompt(options: WorkspacePromptOptions = {}): string {
  const { rollback = true, readOnly = false, extraTools = [], ...toolOptions } = options;
  const limits = resolveToolsOptions(toolOptions);
  const lines = [
    '## Workspace',
    '',
    'You work in a private virtual workspace: a file tree that belongs to this session only. Reach it only through the tools below; nothing you do here touches any other machine or directory.',
    '',
    '- Paths are POSIX and relative to the workspace root. `/`, `.` and an empty path are the root, and a leading `/` also means the root (`/src/a.ts` is `src/a.ts`). `..` may not climb above the root; backslashes and control characters are refused.',
    readOnly
      ? '- The workspace is **read-only**: you can list, read, search and inspect, but every change is refused.'
      : '- Files are UTF-8 text for `read_file` and `edit_file`; binary files can be listed, moved, copied and deleted but not read as text.',
    '',
    '### Tools',
    '',
    '- `list_directory { path? }`: the children of a directory; directories end with `/`, links with `@`.',
    `- \`read_file { path, offset?, limit?, tail? }\`: numbered lines (the numbers are not part of the file). At most ${limits.maxReadLines} lines or ${limits.maxReadChars} characters per call; when more exist the result gives the \`offset\` to read on from (1-based line number). \`tail: N\` reads the last N lines (logs).`,
    `- \`read_many_files { paths }\`: up to ${limits.maxReadManyFiles} files in one call, each shown as \`read_file\` shows it; together at most ${limits.maxReadChars} characters. A file that cannot be read gets its own error; the others are still read.`,
    `- \`read_media { path }\`: an image (PNG, JPEG, GIF, WebP, BMP, SVG) or audio file (MP3, WAV, OGG, FLAC) for you to see or hear, up to ${limits.maxMediaBytes} bytes.`,
    `- \`write_file { path, content, mode? }\`: \`overwrite\` (default), \`create\` (fails if it exists) or \`append\`. At most ${limits.maxWriteChars} characters per call: write larger files in parts with \`append\`.`,
    '- `edit_file { path, old_string, new_string, replace_all? }`: replaces an exact match of `old_string`, which must occur exactly once unless `replace_all` is true. Copy the text from `read_file` without the line numbers and with its exact whitespace.',
    '  For several changes to one file use `edits: [{ old_string, new_string, replace_all? }]` instead: applied in order (each to the result of the ones before), all or nothing. `dry_run: true` returns the unified diff and writes nothing.',
    `- \`glob { pattern, path? }\`: files matching a glob such as \`**/*.ts\`, at most ${limits.maxGlobResults}.`,
    `- \`grep { pattern, path?, glob?, max_matches?, ignore_case? }\`: lines matching a JavaScript regular expression, as \`path:line: text\`; ${limits.defaultGrepMatches} matches by default, at most ${limits.maxGrepMatches}.`,
    '- `delete { path, recursive? }`, `mkdir { path }`, `move { source, destination, overwrite? }`, `copy { source, destination, overwrite?, recursive? }`, `stat { path }`.',
    `- \`directory_tree { path?, depth? }\`: the tree under a directory with file sizes (and totals for directories listed whole), 3 levels by default, at most ${limits.maxTreeEntries} entries.`,
    '- `file_info { path }`: what `stat` says plus, for a file, whether it is text (encoding, line endings, line count), an image or audio, or binary; for a directory, how many entries it holds.',
    `- \`send_file { path, description? }\`: hand a finished file (a report, an image, an archive) to the user, as it is now; up to ${limits.maxSendBytes} bytes. Files you only write stay in the workspace.`,
    ...shellLines(limits.shell),
    ...extraTools.map((t) => `- \`${t.name}\`: ${t.summary}`),
    '',
    '### Text files',
    '',
    '- `read_file` shows lines without `\\r` and without a byte-order mark, and says once when a file uses CRLF or mixed line endings or an encoding other than UTF-8. Write and edit with plain `\\n`: `edit_file` matches whatever endings the file uses and keeps them, the BOM and the encoding; `write_file` over a CRLF file writes CRLF.',
    '- Files in legacy encodings (UTF-16, Latin-1, Shift_JIS …) are read, searched and written back in their own encoding; a character that encoding cannot hold fails with `EILSEQ` and nothing is written. Pass `encoding` only to override a wrong detection.',
    ...(limits.staleWriteGuard
      ? [
          '- If a file changed after you read it (someone else edited it), `write_file` and `edit_file` refuse with `ECONFLICT` (stale) and write nothing: read it again, then redo your change on what it holds now.',
        ]
      : []),
    '',
    '### When a call fails',
    '',
    'A failed call returns a message starting with `Error [CODE]:` (for example `ENOENT` for a missing path, `EEXIST` for an existing one, `EACCES` for a path outside the workspace) that says how to recover. Read it, fix the call and try again.',
  ];
  if (rollback)
    lines.push(
      '',
      'A failed call is rolled back: the workspace is exactly as it was before that call, so you never need to clean up after a partial change.',
    );
  if (limits.readBeforeWrite)
    lines.push(
      '',
      'Read an existing file with `read_file` before you change it with `write_file` or `edit_file`; changing an unread file is refused.',
    );
  lines.push('', 'Results are capped and say so when more exist: narrow the path, pattern or glob rather than asking for everything.');
  return `${lines.join('\n')}\n`;
}

/** The `bash` tool's line, and when to prefer it over the file tools. */
function shellLines(shell: boolean | 'host' | 'sandbox'): string[] {
  if (shell === false) return [];
  const where =
    shell === 'host'
      ? 'real programs from an allow-list, run in the workspace root'
      : shell === 'sandbox'
        ? 'real bash and the system programs (node, git, compilers, test runners …) in a sandbox whose working directory `/workspace` is the workspace; no network'
        : 'a bash interpreter over the workspace (the root is `/`; coreutils, grep, sed, awk, find, jq built in; no network)';
  const programs =
    shell === 'sandbox'
      ? [
          '  Run programs to check your work: the tests, the type checker, the linter, a script you wrote, git. What they change is kept only when the call succeeds.',
        ]
      : [];
  return [
    `- \`bash { command, cwd?, timeout_ms? }\`: ${where}. Returns the exit code, stdout, stderr and the changed files; a non-zero exit code is a normal result.`,
    ...programs,
    '  Use it for what takes one line in a shell: exploring (`ls`, `find`), pipelines, bulk renames, `sed` over many files. Use `read_file` to read a file (windows of large files) and `edit_file` for an exact change to one file.',
    '  To search a whole tree, prefer the `grep` and `glob` tools: they are many times faster than `grep -r` or `find` in the shell.',
  ];
}
