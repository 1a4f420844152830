export { shellTool, type ShellResult, type ShellTool, type ShellToolOptions } from './shell-tool.js';
export { WorkspaceFs } from './workspace-fs.js';
