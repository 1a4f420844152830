// `sessionfs/workspace`: the protocol's defaults, path rules and every error code, for code that works with
// paths or error codes itself, and `resolveLinks` for a driver that stores symlinks as data.
export { DEFAULT_LIMITS, type WorkspaceLimits } from '../workspace/limits.js';
export { normalizePath } from '../workspace/paths.js';
export { WORKSPACE_ERROR_CODES } from '../workspace/errors.js';
export type { LongCallOptions, Progress, ProgressListener } from '../workspace/progress.js';
export { resolveLinks, MAX_LINK_HOPS, type LinkTree, type ResolvedPath } from '../workspace/links.js';
