// `sessionfs/workspace`: the protocol's defaults, path rules and every error code, for code that works with
// paths or error codes itself.
export { DEFAULT_LIMITS, type WorkspaceLimits } from '../workspace/limits.js';
export { normalizePath } from '../workspace/paths.js';
export { WORKSPACE_ERROR_CODES } from '../workspace/errors.js';
export type { LongCallOptions, Progress, ProgressListener } from '../workspace/progress.js';
