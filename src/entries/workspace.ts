// `sessionfs/workspace`: the protocol's defaults and path rules, for code that works with paths itself.
export { DEFAULT_LIMITS, type WorkspaceLimits } from '../workspace/limits.js';
export { normalizePath } from '../workspace/paths.js';
export type { LongCallOptions, Progress, ProgressListener } from '../workspace/progress.js';
