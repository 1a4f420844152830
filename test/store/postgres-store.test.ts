import { describe, expect, it } from 'vitest';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { BlobTreeDriver } from '../../src/store/blob-tree-driver.js';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { postgresSkipReason, usePostgresPool } from '../support/postgres.js';

const unavailable = postgresSkipReason('Postgres session store');

describe.skipIf(unavailable !== undefined)('postgresSessionStore (against a real Postgres)', () => {
  const poolOf = usePostgresPool();

  const storeWith = (schema: string, blobs = memoryBlobStore()) => ({
    blobs,
    store: postgresSessionStore({ pool: poolOf(), blobs, schema }),
  });

  /** Publishes `files` as the session's new content, as an open session would. */
  async function publish(
    store: SessionStore,
    sessionId: string,
    owner: string,
    expectedVersion: number,
    files: Record<string, string>,
    leaseMs = 30_000,
    blobs = store.blobs,
  ) {
    const head = await store.head(sessionId);
    const driver = new BlobTreeDriver(blobs, head?.root, { trackUnpublished: true });
    const workspace = createWorkspace(driver);
    for (const [path, content] of Object.entries(files)) await workspace.write(path, content);
    return store.publish({
      sessionId,
      owner,
      expectedVersion,
      leaseMs,
      upload: async () => ({ root: (await driver.capture()).root, blobs: driver.unpublished() }),
    });
  }

  it('creates its tables on first use, in its own schema, and a session on acquire', async () => {
    const { store } = storeWith('first_use');
    expect(await store.listSessions()).toEqual([]);
    const head = await store.acquire('s1', 'owner-a', 30_000);
    expect(head).toEqual({ sessionId: 's1', parentId: undefined, root: undefined, version: 0 });
    const tables = await poolOf().query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'first_use' ORDER BY 1`);
    expect(tables.rows.map((row) => row.table_name)).toEqual(['gc_candidates', 'heads', 'sessions', 'snapshots']);
  });

  it('refuses a second writer while the lease holds, naming the expiry; the holder may re-acquire', async () => {
    const { store } = storeWith('leases');
    await store.acquire('s', 'a', 30_000);
    await expect(store.acquire('s', 'b', 30_000)).rejects.toMatchObject({
      code: 'ECONFLICT',
      message: expect.stringMatching(/lease is held until \d{4}-/),
    });
    await expect(store.acquire('s', 'a', 30_000)).resolves.toMatchObject({ sessionId: 's' });
    await store.release('s', 'a');
    await expect(store.acquire('s', 'b', 30_000)).resolves.toMatchObject({ sessionId: 's' });
    expect(await store.renew('s', 'a', 30_000)).toBe(false);
    expect(await store.renew('s', 'b', 30_000)).toBe(true);
  });

  it('moves the head by compare-and-swap: a fenced-off owner publishes nothing', async () => {
    const { store } = storeWith('fencing');
    await store.acquire('s', 'a', 1000);
    expect(await publish(store, 's', 'a', 0, { '/a.txt': 'from a' }, 1000)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a's lease expires (a was paused)
    await store.acquire('s', 'b', 30_000);
    const before = await store.head('s');
    await expect(publish(store, 's', 'a', 1, { '/a.txt': 'stale a' })).rejects.toMatchObject({ code: 'ECONFLICT' });
    expect(await store.head('s')).toEqual(before);
    expect(await publish(store, 's', 'b', 1, { '/b.txt': 'from b' })).toBe(2);
    await expect(publish(store, 's', 'b', 1, { '/c.txt': 'old version' })).rejects.toMatchObject({ code: 'ECONFLICT' });
  });

  it('forks from a head: a new session with its parent, sharing every blob', async () => {
    const { store, blobs } = storeWith('forks');
    await store.acquire('parent', 'a', 30_000);
    await publish(store, 'parent', 'a', 0, { '/x.txt': 'x' });
    const stored = blobs.size;
    const fork = await store.acquire('child', 'b', 30_000, 'parent');
    expect(fork).toMatchObject({ sessionId: 'child', parentId: 'parent', root: (await store.head('parent'))?.root, version: 0 });
    expect(blobs.size).toBe(stored);
    expect((await store.listSessions()).map((head) => head.sessionId)).toEqual(['child', 'parent']);
    await expect(store.acquire('orphan', 'c', 30_000, 'missing')).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('gc deletes only blobs unreachable for longer than the grace period, and never a reachable one', async () => {
    const { store, blobs } = storeWith('collect');
    await store.acquire('keep', 'a', 30_000);
    await publish(store, 'keep', 'a', 0, { '/kept.txt': 'kept' });
    await store.acquire('drop', 'a', 30_000);
    await publish(store, 'drop', 'a', 0, { '/dropped.txt': 'dropped' });
    await store.deleteSession('drop');
    const first = await store.gc({ graceMs: 60_000 });
    expect(first.deleted).toBe(0); // unreachable, but only just seen
    expect(first.pending).toBe(2); // drop's file and its root manifest
    const second = await store.gc({ graceMs: 0 });
    expect(second.deleted).toBe(2);
    const keep = createWorkspace(new BlobTreeDriver(blobs, (await store.head('keep'))?.root));
    expect((await keep.read('/kept.txt')).content).toBe('kept');
  });

  it('a publish puts back a blob that gc deleted after the publish found it stored', async () => {
    const { store, blobs } = storeWith('revive');
    await store.acquire('old', 'a', 30_000);
    await publish(store, 'old', 'a', 0, { '/same.txt': 'same bytes' });
    const hashes: string[] = [];
    for await (const hash of blobs.list()) hashes.push(hash);
    await store.deleteSession('old');
    expect((await store.gc({ graceMs: 0 })).deleted).toBe(2); // collected and tombstoned
    // Another machine's cache still believes every blob it once saw is stored.
    const staleCache = { ...blobs, has: async (hash: string) => hashes.includes(hash) || blobs.has(hash) };
    await store.acquire('new', 'b', 30_000);
    await publish(store, 'new', 'b', 0, { '/same.txt': 'same bytes' }, 30_000, staleCache);
    const root = (await store.head('new'))?.root;
    const reopened = createWorkspace(new BlobTreeDriver(blobs, root));
    expect((await reopened.read('/same.txt')).content).toBe('same bytes');
  });

  it('keeps only the configured number of published versions besides the head', async () => {
    const blobs = memoryBlobStore();
    const store = postgresSessionStore({ pool: poolOf(), blobs, schema: 'retention', keepVersions: 2 });
    await store.acquire('s', 'a', 30_000);
    for (let version = 0; version < 5; version += 1) await publish(store, 's', 'a', version, { '/n.txt': String(version) });
    const rows = await poolOf().query(`SELECT version FROM retention.snapshots ORDER BY version`);
    expect(rows.rows.map((row) => Number(row.version))).toEqual([4, 5]);
  });

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => postgresSessionStore({ pool: poolOf(), blobs: memoryBlobStore(), schema: 'x"; DROP TABLE y; --' })).toThrow(
      expect.objectContaining({ code: 'EINVAL' }),
    );
  });
});
