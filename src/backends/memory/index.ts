export { MemoryWorkspace, type MemoryWorkspaceOptions } from './memory-workspace.js';
export { MemoryDriver } from './driver.js';
