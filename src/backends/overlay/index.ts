export { OverlayWorkspace, type OverlayWorkspaceOptions } from './workspace.js';
export { OverlayDriver } from './driver.js';
