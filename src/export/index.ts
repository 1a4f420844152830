export { exportTo, type ExportOptions } from './export.js';
export { ExportConflictError, ExportIncompleteError, type ConflictPolicy, type ExportConflict, type ExportResult } from './export-plan.js';
export { createGitPatch } from '../snapshots/patch.js';
export { pullSnapshot, pushSnapshot, type PullOptions, type PushOptions, type PushResult } from './remote.js';
export type { WriteBackOptions } from './write-back.js';
