import { describe, expect, it } from 'vitest';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { postgresSkipReason, usePostgresPool } from '../support/postgres.js';
import { createSession } from '../../src/session/index.js';

const unavailable = postgresSkipReason('openSession lease');

/** Nothing taken is left held: an open that fails gives its lease back, so the next open does not wait it out. */
describe.skipIf(unavailable !== undefined)('openSession releases what a failed open took (real Postgres)', () => {
  const poolOf = usePostgresPool(4);

  it('refuses invalid limits without taking the lease: the retry opens at once', async () => {
    const store = postgresSessionStore({ pool: poolOf(), blobs: memoryBlobStore(), schema: 'failed_limits' });
    await expect(createSession({ store, sessionId: 's', limits: { maxPathDepth: 0 } })).rejects.toMatchObject({ code: 'EINVAL' });
    const session = await createSession({ store, sessionId: 's' });
    expect(session.id).toBe('s');
    await session.dispose();
  });
});
