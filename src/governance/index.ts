export type { PolicyOperation, WorkspacePolicy } from './policy.js';
