import { resolveToolsOptions, type WorkspaceToolsOptions } from '../tools/options.js';
import { fileTools, type WorkspaceTool } from '../tools/workspace-tools.js';
import { shellTool } from './shell-tool.js';

/**
 * The agent-facing tool suite: the file tools and, when `shell` is on, `bash`. Handlers never throw for a
 * workspace failure: they return a failed `ToolResult` whose message starts with `Error [CODE]:` and says
 * how to recover, and whose `value` is a {@link ToolFailure}. Run them through `session.runTool` so that a
 * failed call is rolled back. The tools of one call to `workspaceTools()` share one read tracker
 * (read-before-write and the stale-write guard).
 */
export function workspaceTools(options: WorkspaceToolsOptions = {}): WorkspaceTool[] {
  const limits = resolveToolsOptions(options);
  const mode = limits.shell === 'host' || limits.shell === 'sandbox' ? limits.shell : 'interpreter';
  const shell = limits.shell === false ? [] : [shellTool({ mode }) as WorkspaceTool];
  return [...fileTools(limits), ...shell];
}
