export { HostWorkspace, type HostWorkspaceOptions, type ChangeDetection } from './workspace.js';
export { isTempName } from './atomic.js';
export { sweepStaleTemp, type SweepResult } from './owned-temp.js';
