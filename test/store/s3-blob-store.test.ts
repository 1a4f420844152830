import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3BlobStore } from '../../src/store/s3-blob-store.js';
import { BlobTreeDriver } from '../../src/store/blob-tree-driver.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { startS3, type RunningS3 } from '../../bench/_servers.mjs';

const hashOf = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

let s3: RunningS3;
beforeAll(async () => {
  s3 = await startS3('blobs');
});
afterAll(async () => {
  await s3?.stop();
});

describe('s3BlobStore (against s3rver)', () => {
  it('stores under prefix/blobs/ab/<hash>, reads back, lists, deletes', async () => {
    const store = s3BlobStore({ client: s3.client(), bucket: 'blobs', prefix: 'team-a' });
    const content = bytes('hello blobs');
    const hash = hashOf(content);
    expect(await store.has(hash)).toBe(false);
    await store.put(hash, content);
    expect(await store.has(hash)).toBe(true);
    const fresh = s3BlobStore({ client: s3.client(), bucket: 'blobs', prefix: 'team-a/' });
    expect(await fresh.get(hash)).toEqual(content);
    const listed: string[] = [];
    for await (const key of fresh.list()) listed.push(key);
    expect(listed).toEqual([hash]);
    const other = s3BlobStore({ client: s3.client(), bucket: 'blobs', prefix: 'team-b' });
    expect(await other.has(hash)).toBe(false);
    await fresh.delete(hash);
    expect(await fresh.get(hash)).toBeUndefined();
  });

  it('reads through a bounded cache: a blob read twice is fetched once', async () => {
    const store = s3BlobStore({ client: s3.client(), bucket: 'blobs', prefix: 'cache' });
    const content = bytes('cached');
    await store.put(hashOf(content), content);
    const reader = s3BlobStore({ client: s3.client(), bucket: 'blobs', prefix: 'cache', cacheBytes: 1024 });
    await reader.get(hashOf(content));
    const copy = await reader.get(hashOf(content));
    expect(reader.requests.get).toBe(1);
    copy![0] = 0; // a caller mutating its copy does not change the cache
    expect(await reader.get(hashOf(content))).toEqual(content);
  });

  it('refuses a key that is not a sha256 before any request', async () => {
    const store = s3BlobStore({ client: s3.client(), bucket: 'blobs' });
    await expect(store.get('../../etc/passwd')).rejects.toMatchObject({ code: 'EINVAL' });
    expect(store.requests.get).toBe(0);
  });

  it('holds a workspace: write, snapshot, reopen elsewhere from the root manifest', async () => {
    const blobs = s3BlobStore({ client: s3.client(), bucket: 'blobs', prefix: 'ws' });
    const driver = new BlobTreeDriver(blobs);
    const workspace = createWorkspace(driver);
    await workspace.write('/notes/todo.md', '- ship it\n');
    const { root } = await driver.capture();
    const elsewhere = createWorkspace(new BlobTreeDriver(s3BlobStore({ client: s3.client(), bucket: 'blobs', prefix: 'ws' }), root));
    expect((await elsewhere.read('/notes/todo.md')).content).toBe('- ship it');
  });
});
