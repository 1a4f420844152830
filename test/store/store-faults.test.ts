import { S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, startS3, type RunningPostgres, type RunningS3 } from '../../bench/_servers.mjs';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { createSession } from '../../src/session/index.js';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import type { RetryOptions } from '../../src/store/retry.js';
import { s3BlobStore } from '../../src/store/s3-blob-store.js';
import type { BlobStore } from '../../src/workspace/driver.js';
import { postgresSkipReason } from '../support/postgres.js';
import { digestOf } from './digest.mjs';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { publishFiles } from './session-store-contract.js';

const unavailable = postgresSkipReason('store faults');
const BUCKET = 'faults';

/**
 * Faults of the remote store's servers, not of our process: Postgres restarted or down in the middle of a
 * session, S3 answering 500/503, resetting or not answering (a proxy in front of s3rver the test controls).
 */
describe.skipIf(unavailable !== undefined)('remote store faults are survived (real Postgres + s3rver behind a fault proxy)', () => {
  let postgres: RunningPostgres;
  let s3: RunningS3;
  let proxy: FaultProxy;
  const pools: pg.Pool[] = [];
  let schemas = 0;
  beforeAll(async () => {
    [postgres, s3] = await Promise.all([startPostgres(), startS3(BUCKET)]);
    proxy = await startFaultProxy(s3.endpoint);
  }, 60_000);
  afterAll(async () => {
    for (const pool of pools) await pool.end().catch(() => undefined);
    await proxy?.close();
    postgres?.stop();
    await s3?.stop();
  });

  const newPool = (): pg.Pool => {
    const pool = new pg.Pool({ connectionString: postgres.connectionString, max: 4 });
    pools.push(pool);
    return pool;
  };
  const s3Through = (endpoint: string, retry?: RetryOptions) =>
    s3BlobStore({
      client: new S3Client({
        endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      }),
      bucket: BUCKET,
      prefix: `run-${++schemas}`,
      ...(retry === undefined ? {} : { retry }),
    });
  const storeOver = (blobs: BlobStore, retry?: RetryOptions) =>
    postgresSessionStore({ pool: newPool(), blobs, schema: `faults_${++schemas}`, ...(retry === undefined ? {} : { retry }) });

  for (const [label, fault] of [
    ['answering 503', { kind: 'status', status: 503 }],
    ['answering 500', { kind: 'status', status: 500 }],
    ['resetting', { kind: 'reset' }],
  ] as const)
    it(`S3 ${label} on the next 3 requests: the publish retries and lands`, async () => {
      const blobs = s3Through(proxy.endpoint);
      const store = storeOver(blobs);
      const session = await createSession({ store, sessionId: 's' });
      await session.filesystem.write('/a.txt', 'a');
      await session.publish();
      const failedBefore = proxy.failed;
      proxy.fail(fault, 3);
      await session.filesystem.write('/b.txt', 'b');
      expect(await session.publish()).toBe(2);
      expect(proxy.failed - failedBefore).toBe(3);
      const digest = await digestOf(session.filesystem);
      await session.dispose();
      const reader = await createSession({ store, sessionId: 's', readOnly: true });
      expect(await digestOf(reader.filesystem)).toBe(digest);
    });

  it('S3 not answering: the publish gives up at its deadline with EUNAVAILABLE, the head stays, the next publish carries everything', async () => {
    const blobs = s3Through(proxy.endpoint, { deadlineMs: 1500, attemptTimeoutMs: 300 });
    const store = storeOver(blobs);
    const session = await createSession({ store, sessionId: 's' });
    await session.filesystem.write('/first.txt', 'first');
    await session.publish();
    const head = await store.head('s');
    proxy.fail({ kind: 'hang' }, Infinity);
    await session.filesystem.write('/second.txt', 'second');
    const started = Date.now();
    await expect(session.publish()).rejects.toMatchObject({ name: 'StoreUnavailableError', code: 'EUNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await store.head('s')).toEqual(head);
    proxy.heal();
    await session.filesystem.write('/third.txt', 'third');
    expect(await session.publish()).toBe(2);
    const digest = await digestOf(session.filesystem);
    await session.dispose();
    const again = await createSession({ store, sessionId: 's', readOnly: true });
    expect(await digestOf(again.filesystem)).toBe(digest);
    expect((await again.filesystem.read('/second.txt')).content).toBe('second');
  });

  it('Postgres restarted while a publish uploads: the process lives, the publish lands on a new connection', async () => {
    let restarted = false;
    const inner = memoryBlobStore();
    // The restart lands in the middle of the upload, after the publish's first transaction.
    const blobs: BlobStore = {
      get: (hash) => inner.get(hash),
      has: (hash) => inner.has(hash),
      put: async (hash, bytes) => {
        if (!restarted) {
          restarted = true;
          postgres.restart();
        }
        await inner.put(hash, bytes);
      },
      list: () => inner.list(),
      delete: (hash) => inner.delete(hash),
    };
    const store = storeOver(blobs);
    const session = await createSession({ store, sessionId: 's' });
    for (let i = 0; i < 20; i += 1) await session.filesystem.write(`/f${i}.txt`, `file ${i}`);
    expect(await session.publish()).toBe(1);
    expect(restarted).toBe(true);
    await session.filesystem.write('/after.txt', 'after');
    expect(await session.publish()).toBe(2);
    const digest = await digestOf(session.filesystem);
    await session.dispose();
    const reader = await createSession({ store, sessionId: 's', readOnly: true });
    expect(await digestOf(reader.filesystem)).toBe(digest);
  }, 30_000);

  it('Postgres down: publish retries until its deadline, then EUNAVAILABLE; once it is back the next publish carries everything', async () => {
    const store = storeOver(memoryBlobStore(), { deadlineMs: 1500 });
    const session = await createSession({ store, sessionId: 's' });
    await session.filesystem.write('/one.txt', 'one');
    await session.publish();
    postgres.down();
    try {
      await session.filesystem.write('/two.txt', 'two');
      const started = Date.now();
      const error = await session.publish().catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'StoreUnavailableError', code: 'EUNAVAILABLE', message: expect.stringMatching(/ECONNREFUSED/) });
      expect(Date.now() - started).toBeGreaterThan(1000);
    } finally {
      postgres.up();
    }
    await session.filesystem.write('/three.txt', 'three');
    expect(await session.publish()).toBe(2);
    await session.dispose();
    const reader = await createSession({ store, sessionId: 's', readOnly: true });
    expect((await reader.filesystem.glob('**/*')).map((match) => match.path)).toEqual(['one.txt', 'three.txt', 'two.txt']);
  }, 30_000);

  it('the lease still fences across a restart: an owner paused past its lease publishes nothing', async () => {
    const store = storeOver(memoryBlobStore());
    await store.acquire('s', 'paused', 1000);
    expect(await publishFiles(store, 's', 'paused', 0, { '/a.txt': 'a' }, 1000)).toBe(1);
    postgres.restart();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await store.acquire('s', 'newer', 30_000);
    await expect(publishFiles(store, 's', 'paused', 1, { '/a.txt': 'stale' })).rejects.toMatchObject({ code: 'ECONFLICT' });
    expect(await publishFiles(store, 's', 'newer', 1, { '/b.txt': 'b' })).toBe(2);
  }, 30_000);
});
