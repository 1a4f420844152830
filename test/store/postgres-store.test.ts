import { describe, expect, it } from 'vitest';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import { publishFiles, sessionStoreContract } from './session-store-contract.js';
import { postgresSkipReason, usePostgresPool } from '../support/postgres.js';

const unavailable = postgresSkipReason('Postgres session store');

describe.skipIf(unavailable !== undefined)('postgresSessionStore (against a real Postgres)', () => {
  const poolOf = usePostgresPool();

  const storeWith = (schema: string, blobs = memoryBlobStore()) => ({
    blobs,
    store: postgresSessionStore({ pool: poolOf(), blobs, schema }),
  });

  sessionStoreContract((schema) => storeWith(schema).store);

  it('creates its tables on first use, in its own schema, and a session on acquire', async () => {
    const { store } = storeWith('first_use');
    expect(await store.listSessions()).toEqual([]);
    const head = await store.acquire('s1', 'owner-a', 30_000);
    expect(head).toEqual({ sessionId: 's1', parentId: undefined, root: undefined, version: 0 });
    const tables = await poolOf().query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'first_use' ORDER BY 1`);
    expect(tables.rows.map((row) => row.table_name)).toEqual(['gc_candidates', 'heads', 'sessions', 'snapshots']);
  });

  it('keeps only the configured number of published versions besides the head', async () => {
    const blobs = memoryBlobStore();
    const store = postgresSessionStore({ pool: poolOf(), blobs, schema: 'retention', keepVersions: 2 });
    await store.acquire('s', 'a', 30_000);
    for (let version = 0; version < 5; version += 1) await publishFiles(store, 's', 'a', version, { '/n.txt': String(version) });
    const rows = await poolOf().query(`SELECT version FROM retention.snapshots ORDER BY version`);
    expect(rows.rows.map((row) => Number(row.version))).toEqual([4, 5]);
  });

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => postgresSessionStore({ pool: poolOf(), blobs: memoryBlobStore(), schema: 'x"; DROP TABLE y; --' })).toThrow(
      expect.objectContaining({ code: 'EINVAL' }),
    );
  });
});
