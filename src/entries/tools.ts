// `sessionfs/tools`: the tool suite's names, options and failure helpers (workspaceTools, workspacePrompt
// and defineTool are in the root), and the orchestrator's `merge` tool.
export {
  DEFAULT_TOOLS_OPTIONS,
  failure,
  failureFromError,
  WORKSPACE_TOOL_NAMES,
  WorkspaceToolsOptionsSchema,
  type ToolErrorCode,
  type ToolFailure,
  type ToolFailureReason,
  type WorkspaceTool,
  type WorkspaceToolName,
  type WorkspaceToolsOptions,
} from '../tools/index.js';
export { mergeTool, type MergeRegistry } from '../session/merge.js';
