export { workspaceTools } from './suite.js';
export { shellTool, type ShellResult, type ShellTool, type ShellToolOptions } from './shell-tool.js';
export { DEFAULT_HOST_COMMANDS } from './command-policy.js';
export { WorkspaceFs } from './workspace-fs.js';
