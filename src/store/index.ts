export { BlobTreeDriver, type Capture } from './blob-tree-driver.js';
export { localSessionStore, type LocalSessionStoreOptions } from './local-store.js';
export { openSession, type OpenSessionOptions, type RemoteSession } from './open-session.js';
export { postgresSessionStore, type PgClient, type PgPool, type PostgresSessionStoreOptions } from './postgres-store.js';
export type { PublishRequest, SessionHead, SessionStore } from './session-store.js';
export { StoreNamespace, type StoreNamespaceOptions } from './store-namespace.js';
