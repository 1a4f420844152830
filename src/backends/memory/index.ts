export { MemoryWorkspace, type MemoryWorkspaceOptions } from './memory-workspace.js';
