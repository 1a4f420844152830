export { HostWorkspace, type HostWorkspaceOptions, type ChangeDetection } from './workspace.js';
