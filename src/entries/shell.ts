// `sessionfs/shell`: the bash tool on its own, the host mode's default commands, the just-bash file system.
export { shellTool, DEFAULT_HOST_COMMANDS, WorkspaceFs, type ShellResult, type ShellTool, type ShellToolOptions } from '../shell/index.js';
