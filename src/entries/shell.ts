// `sessionfs/shell`: the bash tool on its own, the host mode's default commands, the just-bash file system.
export { shellTool, DEFAULT_HOST_COMMANDS, WorkspaceFs, type ShellResult, type ShellTool, type ShellToolOptions } from '../shell/index.js';
// Real programs in a sandbox (`session.exec`, the bash tool's `mode: 'sandbox'`): the engine, to configure or replace it.
export {
  bwrapEngine,
  type BwrapEngineOptions,
  type ExecEngine,
  type EngineRequest,
  type EngineOutcome,
  type StagingDirs,
  type HiddenPath,
  type ExecOptions,
  type ExecResult,
  type ExecChanges,
  type ExecLimits,
} from '../programs/index.js';
