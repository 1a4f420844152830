import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { SessionStore } from '../store/session-store.js';
import { WorkspaceError } from '../workspace/errors.js';
import { redactUrl, type StoreFlags } from './store-flags.js';
import { UsageError } from './usage-error.js';

/** A store the command opened, and how to let go of it (a Postgres pool is ended). */
export interface OpenedStore {
  store: SessionStore;
  /** Host directories behind the store: never shown to a model. */
  hostDirs: string[];
  close(): Promise<void>;
}

/** How long a command waits for an unreachable Postgres or S3 before it says so (a server waits longer: 30 s). */
const COMMAND_DEADLINE_MS = 5_000;

/**
 * Opens the store the flags name. With `create: false` (the `sessions` commands) a local store directory that
 * does not exist yet is not made: the result is `undefined`, a store with no session. A store directory
 * that cannot be a store (another version's, not writable, full, holding something else) is a usage error
 * naming the flag and the directory; nothing in it is changed. The Postgres driver (`pg`) and the S3 client
 * (`@aws-sdk/client-s3`) are optional peer dependencies, loaded only for `--store`.
 */
export async function openStore(flags: StoreFlags, options: { create: boolean; server?: boolean }): Promise<OpenedStore | undefined> {
  if (flags.kind === 'local') {
    const dir = resolve(flags.dir);
    const named = flags.defaulted ? `the default store directory ${JSON.stringify(flags.dir)}` : `--store-dir ${JSON.stringify(flags.dir)}`;
    if (!options.create && !existsSync(dir)) return undefined;
    const { localSessionStore } = await import('../store/local-store.js');
    try {
      return { store: localSessionStore({ dir }), hostDirs: [dir], close: async () => undefined };
    } catch (error) {
      if (error instanceof WorkspaceError) throw new UsageError(`${named}: ${error.message}`);
      throw error;
    }
  }
  const [pg, s3] = await Promise.all([peer('pg', '--store'), peer('@aws-sdk/client-s3', '--s3')]);
  const { Pool } = ((pg as { default?: unknown }).default ?? pg) as typeof import('pg');
  const { S3Client } = s3 as typeof import('@aws-sdk/client-s3');
  const { postgresSessionStore } = await import('../store/postgres-store.js');
  const { s3BlobStore } = await import('../store/s3-blob-store.js');
  const pool = new Pool({ connectionString: flags.url, max: 4 });
  // An S3-compatible server takes any region; AWS itself needs the user's (AWS_REGION, ~/.aws/config).
  const region = process.env.AWS_REGION === undefined ? { region: 'us-east-1' } : {};
  const client = new S3Client(flags.endpoint === undefined ? {} : { endpoint: flags.endpoint, forcePathStyle: true, ...region });
  const retry = options.server === true ? {} : { retry: { deadlineMs: COMMAND_DEADLINE_MS } };
  const blobs = s3BlobStore({ client, bucket: flags.bucket, ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }), ...retry });
  return {
    store: postgresSessionStore({ pool, blobs, ...retry }),
    hostDirs: [],
    async close() {
      await pool.end().catch(() => undefined);
      client.destroy();
    },
  };
}

async function peer(name: string, flag: string): Promise<unknown> {
  try {
    return await import(name);
  } catch {
    throw new Error(`${flag} needs the ${name} package, an optional dependency of sessionfs: install it (npm install ${name})`);
  }
}

/** What a message may say of where the sessions are. */
export function storeLabel(flags: StoreFlags): string {
  return flags.kind === 'local' ? 'the local store' : `the store at ${redactUrl(flags.url)}`;
}
