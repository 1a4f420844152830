export { bwrapEngine, type BwrapEngineOptions } from './bwrap-engine.js';
export type { ExecEngine, EngineRequest, EngineOutcome, HiddenPath, StagingDirs } from './engine.js';
export { ProgramRunner, type ProgramRunnerOptions } from './runner.js';
export { applyChanges } from './apply.js';
export { captureChanges, type StagedChange, type Capture } from './capture.js';
export type { ExecOptions, ExecResult, ExecChanges, ExecLimits } from './types.js';
