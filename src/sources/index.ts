export { hydrate, defaultMountPath } from './hydrate.js';
export { HostMountSchema, type HostMount, type HydrateOptions, type HydrateProgress, type HydrateResult } from './schema.js';
