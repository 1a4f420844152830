import type { z } from 'zod';
import type { Tool } from '../session/types.js';
import { shellTool } from '../shell/shell-tool.js';
import { resolveToolsOptions, type WorkspaceToolsOptions } from './options.js';
import { ReadTracker } from './read-tracker.js';
import type { ToolDeps } from './handlers/shared.js';
import { listDirectoryTool } from './handlers/list-directory.js';
import { readFileTool } from './handlers/read-file.js';
import { writeFileTool } from './handlers/write-file.js';
import { editFileTool } from './handlers/edit-file.js';
import { globTool } from './handlers/glob.js';
import { grepTool } from './handlers/grep.js';
import { deleteTool } from './handlers/delete.js';
import { mkdirTool } from './handlers/mkdir.js';
import { copyTool, moveTool } from './handlers/move-copy.js';
import { statTool } from './handlers/stat.js';
import { readManyFilesTool } from './handlers/read-many-files.js';
import { readMediaTool } from './handlers/read-media.js';
import { directoryTreeTool } from './handlers/directory-tree.js';
import { fileInfoTool } from './handlers/file-info.js';
import { sendFileTool } from './handlers/send-file.js';

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
  'read_many_files',
  'read_media',
  'directory_tree',
  'file_info',
  'send_file',
] as const;

/** The suite's tools, and `bash` when `shell` is on. */
export type WorkspaceToolName = (typeof WORKSPACE_TOOL_NAMES)[number] | 'bash';

/** A tool of the suite: zod parameters, their JSON Schema, and a handler returning a `ToolResult`. */
export type WorkspaceTool = Tool<z.ZodType, unknown> & { name: WorkspaceToolName };

/**
 * The agent-facing tool suite, one module per tool under `handlers/`. Handlers never throw for a workspace
 * failure: they return a failed `ToolResult` whose message starts with `Error [CODE]:` and says how to
 * recover, and whose `value` is a {@link ToolFailure}. Run them through `session.runTool` so that a failed
 * call is rolled back. The tools of one call to `workspaceTools()` share one read tracker (read-before-write
 * and the stale-write guard).
 */
export function workspaceTools(options: WorkspaceToolsOptions = {}): WorkspaceTool[] {
  const limits = resolveToolsOptions(options);
  const deps: ToolDeps = { limits, tracker: new ReadTracker(limits) };
  const shell = limits.shell === false ? [] : [shellTool({ mode: limits.shell === 'host' ? 'host' : 'interpreter' })];
  return [
    listDirectoryTool(deps),
    readFileTool(deps),
    writeFileTool(deps),
    editFileTool(deps),
    globTool(deps),
    grepTool(deps),
    deleteTool(deps),
    mkdirTool(),
    moveTool(deps),
    copyTool(deps),
    statTool(),
    readManyFilesTool(deps),
    readMediaTool(deps),
    directoryTreeTool(deps),
    fileInfoTool(),
    sendFileTool(deps),
    ...shell,
  ] as WorkspaceTool[];
}
