export { hydrate, defaultSourcePath } from './hydrate.js';
export { HostSourceSchema, type HostSource, type HydrateOptions, type HydrateProgress, type HydrateResult } from './schema.js';
