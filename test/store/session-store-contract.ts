import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { newLeaseOwner } from '../../src/store/lease-owner.js';
import { BlobTreeDriver } from '../../src/store/blob-tree-driver.js';
import type { SessionStore } from '../../src/store/session-store.js';
import type { BlobStore } from '../../src/workspace/driver.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';

/** Publishes `files` as the session's new content, as an open session would. */
export async function publishFiles(
  store: SessionStore,
  sessionId: string,
  owner: string,
  expectedVersion: number,
  files: Record<string, string>,
  leaseMs = 30_000,
  blobs: BlobStore = store.blobs,
  base = false,
): Promise<number> {
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
    ...(base ? { base } : {}),
  });
}

/** A lease owner as `newLeaseOwner()` makes them, naming a process of this machine that has exited. */
function deadOwner(): string | undefined {
  const parts = newLeaseOwner().split(':');
  if (parts.length !== 5) return undefined; // no /proc: owners name no process here
  const exited = spawnSync(process.execPath, ['-e', '0']);
  parts[3] = String(exited.pid);
  return parts.join(':');
}

async function listed(blobs: BlobStore): Promise<string[]> {
  const hashes: string[] = [];
  for await (const hash of blobs.list?.() ?? []) hashes.push(hash);
  return hashes;
}

/**
 * What every `SessionStore` does (leases, fencing, forks, gc): run inside a describe block, `storeNamed`
 * gives a fresh, empty store for each name.
 */
export function sessionStoreContract(storeNamed: (name: string) => SessionStore): void {
  it('refuses a second writer while the lease holds, naming the expiry; the holder may re-acquire', async () => {
    const store = storeNamed('leases');
    expect(await store.acquire('s', 'a', 30_000)).toEqual({ sessionId: 's', parentId: undefined, root: undefined, version: 0 });
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
    const store = storeNamed('fencing');
    await store.acquire('s', 'a', 1000);
    expect(await publishFiles(store, 's', 'a', 0, { '/a.txt': 'from a' }, 1000)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a's lease expires (a was paused)
    await store.acquire('s', 'b', 30_000);
    const before = await store.head('s');
    await expect(publishFiles(store, 's', 'a', 1, { '/a.txt': 'stale a' })).rejects.toMatchObject({ code: 'ECONFLICT' });
    expect(await store.head('s')).toEqual(before);
    expect(await publishFiles(store, 's', 'b', 1, { '/b.txt': 'from b' })).toBe(2);
    await expect(publishFiles(store, 's', 'b', 1, { '/c.txt': 'old version' })).rejects.toMatchObject({ code: 'ECONFLICT' });
  });

  it('forks from a head: a new session with its parent, sharing every blob', async () => {
    const store = storeNamed('forks');
    await store.acquire('parent', 'a', 30_000);
    await publishFiles(store, 'parent', 'a', 0, { '/x.txt': 'x' });
    const stored = (await listed(store.blobs)).length;
    const fork = await store.acquire('child', 'b', 30_000, 'parent');
    expect(fork).toMatchObject({ sessionId: 'child', parentId: 'parent', root: (await store.head('parent'))?.root, version: 0 });
    expect((await listed(store.blobs)).length).toBe(stored);
    expect((await store.listSessions()).map((head) => head.sessionId)).toEqual(['child', 'parent']);
    await expect(store.acquire('orphan', 'c', 30_000, 'missing')).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('describes a session: its base, times, lease and retained roots (newest first)', async () => {
    const store = storeNamed('describe');
    expect(await store.describeSession('nobody')).toBeUndefined();
    const before = Date.now() - 1000; // Postgres's clock may trail this one a little
    await store.acquire('s', 'a', 30_000);
    const fresh = await store.describeSession('s');
    expect(fresh).toMatchObject({ sessionId: 's', version: 0, root: undefined, base: undefined, retained: [] });
    expect(fresh?.leaseUntil?.getTime()).toBeGreaterThan(Date.now() + 20_000);
    expect(fresh?.createdAt.getTime()).toBeGreaterThanOrEqual(before);
    await publishFiles(store, 's', 'a', 0, { '/a.txt': 'one' });
    await publishFiles(store, 's', 'a', 1, { '/b.txt': 'two' });
    const two = await store.describeSession('s');
    const head = await store.head('s');
    expect(two).toMatchObject({ version: 2, root: head?.root, base: undefined });
    expect(two?.retained.map((entry) => entry.version)).toEqual([2, 1]);
    expect(two?.retained[0]?.root).toBe(head?.root);
    expect(two?.updatedAt.getTime()).toBeGreaterThanOrEqual(fresh?.createdAt.getTime() ?? 0);
    await store.release('s', 'a');
    expect((await store.describeSession('s'))?.leaseUntil).toBeUndefined();
    // A fork begins where its parent was; a publish marked `base` moves where a session begins (a seed).
    await store.acquire('child', 'b', 30_000, 's');
    expect((await store.describeSession('child'))?.base).toBe(head?.root);
    await store.acquire('seeded', 'c', 30_000);
    await publishFiles(store, 'seeded', 'c', 0, { '/seed.txt': 'seed' }, 30_000, store.blobs, true);
    const seeded = await store.describeSession('seeded');
    expect(seeded?.base).toBe(seeded?.root);
    await publishFiles(store, 'seeded', 'c', 1, { '/work.txt': 'work' });
    expect((await store.describeSession('seeded'))?.base).toBe(seeded?.root);
  });

  it('gc keeps what a session began from after its head moved past every retained root', async () => {
    const store = storeNamed('base_kept');
    await store.acquire('s', 'a', 30_000);
    await publishFiles(store, 's', 'a', 0, { '/seed.txt': 'the seed' }, 30_000, store.blobs, true);
    const base = (await store.describeSession('s'))?.base;
    for (let version = 1; version < 8; version += 1) await publishFiles(store, 's', 'a', version, { '/seed.txt': `edit ${version}` });
    expect((await store.describeSession('s'))?.retained.some((entry) => entry.root === base)).toBe(false);
    await store.gc({ graceMs: 0 });
    await store.gc({ graceMs: 0 });
    const began = createWorkspace(new BlobTreeDriver(store.blobs, base));
    expect((await began.read('/seed.txt')).content).toBe('the seed');
  });

  it('gives the lease at once to the next owner when its holder is a process of this machine that exited', async (context) => {
    const store = storeNamed('dead_owner');
    const dead = deadOwner();
    if (dead === undefined) return context.skip();
    await store.acquire('s', dead, 30_000);
    expect((await store.describeSession('s'))?.leaseUntil).toBeUndefined();
    await expect(store.acquire('s', newLeaseOwner(), 30_000)).resolves.toMatchObject({ sessionId: 's' });
    // A live holder (this process) keeps it until it expires.
    await expect(store.acquire('s', newLeaseOwner(), 30_000)).rejects.toMatchObject({ code: 'ECONFLICT' });
    // An owner from another boot is never judged gone: its machine is not this one.
    await store.acquire('t', dead.replace(/^([^:]+):[0-9a-f]/, '$1:x'), 30_000);
    await expect(store.acquire('t', newLeaseOwner(), 30_000)).rejects.toMatchObject({ code: 'ECONFLICT' });
  });

  it('gc deletes only blobs unreachable for longer than the grace period, and never a reachable one', async () => {
    const store = storeNamed('collect');
    await store.acquire('keep', 'a', 30_000);
    await publishFiles(store, 'keep', 'a', 0, { '/kept.txt': 'kept' });
    await store.acquire('drop', 'a', 30_000);
    await publishFiles(store, 'drop', 'a', 0, { '/dropped.txt': 'dropped' });
    await store.deleteSession('drop');
    const first = await store.gc({ graceMs: 60_000 });
    expect(first.deleted).toBe(0); // unreachable, but only just seen
    expect(first.pending).toBe(2); // drop's file and its root manifest
    const second = await store.gc({ graceMs: 0 });
    expect(second.deleted).toBe(2);
    const keep = createWorkspace(new BlobTreeDriver(store.blobs, (await store.head('keep'))?.root));
    expect((await keep.read('/kept.txt')).content).toBe('kept');
  });

  it('a publish puts back a blob that gc deleted after the publish found it stored', async () => {
    const store = storeNamed('revive');
    const { blobs } = store;
    await store.acquire('old', 'a', 30_000);
    await publishFiles(store, 'old', 'a', 0, { '/same.txt': 'same bytes' });
    const hashes = await listed(blobs);
    await store.deleteSession('old');
    expect((await store.gc({ graceMs: 0 })).deleted).toBe(2);
    // Another machine's cache still believes every blob it once saw is stored.
    const staleCache: BlobStore = {
      get: (hash) => blobs.get(hash),
      put: (hash, bytes) => blobs.put(hash, bytes),
      has: async (hash) => hashes.includes(hash) || blobs.has(hash),
    };
    await store.acquire('new', 'b', 30_000);
    await publishFiles(store, 'new', 'b', 0, { '/same.txt': 'same bytes' }, 30_000, staleCache);
    const reopened = createWorkspace(new BlobTreeDriver(blobs, (await store.head('new'))?.root));
    expect((await reopened.read('/same.txt')).content).toBe('same bytes');
  });
}
