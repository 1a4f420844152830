export { WORKSPACE_TOOL_NAMES, type WorkspaceTool, type WorkspaceToolName } from './workspace-tools.js';
export { workspacePrompt, type WorkspacePromptOptions } from './prompt.js';
export { DEFAULT_TOOLS_OPTIONS, WorkspaceToolsOptionsSchema, type WorkspaceToolsOptions } from './options.js';
export { failure, failureFromError, type ToolErrorCode, type ToolFailure, type ToolFailureReason } from './failure.js';
