export { createSession, type CreateSessionOptions, type StoreSessionOptions } from './create-session.js';
export type { SessionNamespace } from './options.js';
export type { StoreSeedOptions } from './stored-seed.js';
export { defineTool } from './define-tool.js';
export { scrubHostPaths, type ScrubOptions } from './scrub.js';
export type * from './types.js';
export type { RetentionOptions } from './retention.js';
