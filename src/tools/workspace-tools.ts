import type { z } from 'zod';
import type { Tool } from '../session/types.js';
import type { ResolvedToolsOptions } from './options.js';
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
 * The file tools of the suite, one module per tool under `handlers/`, sharing one read tracker
 * (read-before-write and the stale-write guard). `workspaceTools()` (src/shell/suite.ts) adds `bash` when
 * `shell` is on: the shell sits above the tools, so the whole suite is put together there.
 */
export function fileTools(limits: Readonly<ResolvedToolsOptions>): WorkspaceTool[] {
  const deps: ToolDeps = { limits, tracker: new ReadTracker(limits) };
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
  ] as WorkspaceTool[];
}
