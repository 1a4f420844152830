export { HostWorkspace, type HostWorkspaceOptions, type ChangeDetection } from './workspace.js';
export { isTempName } from './atomic.js';
