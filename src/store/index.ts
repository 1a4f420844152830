export { storeDriver, type StoreDriverOptions } from './store-driver.js';
export type { BlobTreeDriver, Capture } from './blob-tree-driver.js';
export { localSessionStore, type LocalSessionStoreOptions } from './local-store.js';
export { postgresSessionStore, type PgClient, type PgPool, type PostgresSessionStoreOptions } from './postgres-store.js';
export type { PublishRequest, RetainedRoot, SessionHead, SessionInfo, SessionStore } from './session-store.js';
