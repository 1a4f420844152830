import { InvalidPathError, isWorkspaceError, type WorkspaceError, type WorkspaceErrorCode } from '../workspace/errors.js';
import type { Workspace } from '../workspace/types.js';
import { scrubHostPaths } from '../session/scrub.js';
import type { ToolResult } from '../session/types.js';

/**
 * Codes a failed tool result carries: the protocol's `WorkspaceError` codes, plus `ETOOL` for a tool-level
 * policy (read-before-write). An aborted call carries `ABORT_ERR`, the protocol's own code.
 */
export type ToolErrorCode = WorkspaceErrorCode | 'ETOOL';

/** Why a tool-level check (not the protocol) refused the call. */
export type ToolFailureReason = 'no_match' | 'ambiguous' | 'no_change' | 'not_read' | 'stale' | 'too_large' | 'internal';

/** The `value` of every failed result the tool suite returns. */
export interface ToolFailure {
  code: ToolErrorCode;
  /** The workspace path concerned, normalised (`/` for the root). */
  path?: string;
  reason?: ToolFailureReason;
}

/** A failed result: the message starts with `Error [CODE]:` so that a model sees the code in the text. */
export function failure(code: ToolErrorCode, message: string, extra: Omit<ToolFailure, 'code'> = {}): ToolResult<ToolFailure> {
  const value: ToolFailure = { code };
  if (extra.path !== undefined) value.path = extra.path;
  if (extra.reason !== undefined) value.reason = extra.reason;
  return { success: false, message: `Error [${code}]: ${message}`, value };
}

/** The tools whose failure messages get tool-specific hints. */
export type HintedTool =
  'list_directory' | 'read_file' | 'write_file' | 'edit_file' | 'glob' | 'grep' | 'delete' | 'mkdir' | 'move' | 'copy' | 'stat' | string;

const FIND_PATH = 'Paths are relative to the workspace root; use list_directory or glob to find the right one.';

/**
 * Turns whatever a handler caught into a failed result a model can recover from. Workspace errors keep
 * their code and their (path-safe) message with a hint for the tool at hand; anything else becomes a
 * generic internal error whose text is not shown, since it might carry a host path.
 */
export function failureFromError(tool: HintedTool, error: unknown, workspace?: Workspace): ToolResult<ToolFailure> {
  if (!isWorkspaceError(error)) {
    const name = error instanceof Error && /^[A-Za-z]+$/.test(error.name) ? ` (${error.name})` : '';
    return failure(
      'ETOOL',
      `${tool} hit an unexpected internal error${name}. Nothing was changed. Retry once; if it fails again, try a different approach.`,
      { reason: 'internal' },
    );
  }
  let hint = hintFor(tool, error);
  if (
    error.code === 'ENOENT' &&
    error.path !== undefined &&
    /^(?:tmp|var|home|Users|usr|etc|opt|private|mnt|root|srv|work)\//.test(error.path)
  ) {
    hint += " A leading '/' means the workspace root, not the host's: host paths do not exist here.";
  }
  const message = scrubHostPaths(`${sentence(messageFor(tool, error))} ${hint}`.trim(), { root: workspace?.root });
  return failure(error.code, message, error.path === undefined ? {} : { path: error.path });
}

/** An EILSEQ raised on write (a character the file's encoding cannot hold), not a binary file on read. */
function isUnencodable(error: WorkspaceError): boolean {
  return error.message.includes('cannot be written in');
}

function messageFor(tool: HintedTool, error: WorkspaceError): string {
  const path = error.path ?? 'the path';
  switch (error.code) {
    case 'EILSEQ':
      if (isUnencodable(error)) return error.message;
      return `${path} is not a text file (it looks binary), so ${tool} cannot work with it as text`;
    case 'EROFS':
      return `the workspace is read-only, so ${tool} cannot change ${path}`;
    case 'ENOENT':
      return `${path} does not exist`;
    default:
      return error.message;
  }
}

function hintFor(tool: HintedTool, error: WorkspaceError): string {
  switch (error.code) {
    case 'ENOENT':
      return FIND_PATH;
    case 'EISDIR':
      if (tool === 'read_file' || tool === 'edit_file') return 'Use list_directory to see what it contains, then pick a file.';
      if (tool === 'write_file') return 'Choose a file path, for example one inside that directory.';
      return '';
    case 'ENOTDIR':
      if (tool === 'list_directory') return 'It is a file: use read_file to read it.';
      return 'A component of the path is a file, not a directory; check the path with list_directory.';
    case 'EEXIST':
      if (tool === 'write_file') return "Use mode 'overwrite' to replace it, or mode 'append' to add to it.";
      return '';
    case 'ENOTEMPTY':
      return '';
    case 'EACCES':
      return "Every path must stay inside the workspace: it is relative to the workspace root ('/' is the root), '..' may not climb above the root, and links that lead outside it cannot be followed.";
    case 'EROFS':
      return 'You can read, list and search files, but not change them.';
    case 'EINVAL':
      if (error instanceof InvalidPathError) return "Paths use '/' as the separator and may not contain backslashes or control characters.";
      if (tool === 'grep' && /regular expression/.test(error.message)) {
        return 'pattern is a JavaScript regular expression: escape ( ) [ ] { } . * + ? | ^ $ \\ with a backslash to match them literally.';
      }
      return '';
    case 'EILSEQ':
      if (isUnencodable(error))
        return 'Use only characters that encoding can hold, or rewrite the whole file with write_file and encoding "utf-8".';
      return tool === 'read_file' || tool === 'edit_file' ? 'Use stat to see its size and type.' : '';
    case 'EFBIG':
      return /\bpath\b/.test(error.message) ? 'Use a shallower path with shorter names.' : 'Write less content in one call.';
    case 'ESNAPSHOT':
      return 'Use a snapshot id returned by the snapshot tool.';
    default:
      return '';
  }
}

function sentence(text: string): string {
  // Not capitalised: messages often start with a path, which must stay exactly as it is.
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
