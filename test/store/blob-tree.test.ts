import { describe, expect, it } from 'vitest';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { storeDriver } from '../../src/store/store-driver.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import type { BlobStore } from '../../src/workspace/driver.js';
import { tempDirs } from '../../src/testing/harness.js';
import { writeTree } from '../support/backends.js';
import { filesOf, gitApply } from '../support/host-files.js';

// The whole protocol runs on this tree as the matrix's 'store (remote sessions)' (test/protocol/store.compliance.test.ts);
// here, what only a blob-backed tree promises.
/** A blob store that counts reads, to see what is fetched lazily. */
function counting(store: BlobStore): BlobStore & { gets: string[] } {
  const gets: string[] = [];
  return { ...store, gets, get: async (hash) => (gets.push(hash), store.get(hash)) };
}

async function seeded(blobs: BlobStore): Promise<string> {
  const driver = storeDriver({ blobs });
  const workspace = createWorkspace(driver);
  for (let dir = 0; dir < 20; dir += 1)
    for (let file = 0; file < 10; file += 1) await workspace.write(`/d${dir}/f${file}.txt`, `content ${dir}/${file}\n`);
  await workspace.write('/README.md', '# hello\n');
  return (await driver.capture()).root;
}

describe('blob tree: lazy, O(changes), resumable', () => {
  it('opens on a root without reading anything, then fetches only what a call touches', async () => {
    const store = memoryBlobStore();
    const root = await seeded(store);
    const blobs = counting(store);
    const workspace = createWorkspace(storeDriver({ blobs, root }));
    expect(blobs.gets).toEqual([]);
    expect(await workspace.read('/d7/f3.txt')).toMatchObject({ content: 'content 7/3' });
    // root manifest, d7's manifest, the file: 3 of the 222 blobs.
    expect(blobs.gets).toHaveLength(3);
  });

  it('a capture after one write stores one file and the manifests above it, nothing else', async () => {
    const store = memoryBlobStore();
    const root = await seeded(store);
    const before = store.size;
    const driver = storeDriver({ blobs: store, root });
    await createWorkspace(driver).write('/d3/f1.txt', 'changed\n');
    const capture = await driver.capture();
    expect(capture.root).not.toBe(root);
    expect(capture.fresh).toHaveLength(3); // the file, d3's manifest, the root manifest
    expect(store.size).toBe(before + 3);
  });

  it('a snapshot record restores in another workspace over the same blobs (resume anywhere)', async () => {
    const store = memoryBlobStore();
    const first = createWorkspace(storeDriver({ blobs: store }));
    await first.write('/src/a.ts', 'export const a = 1;\n');
    await first.mkdir('/empty');
    const record = await first.snapshot({ tag: 'handover' });
    const second = createWorkspace(storeDriver({ blobs: store }));
    await second.write('/other.txt', 'x');
    await second.restore(record);
    expect((await second.list('/')).map((entry) => entry.path)).toEqual(['empty', 'src']);
    expect(await second.read('/src/a.ts')).toMatchObject({ content: 'export const a = 1;' });
    expect(await second.diff(record)).toEqual([]);
  });

  it('copying an unchanged directory is O(1) and shares its blobs', async () => {
    const store = memoryBlobStore();
    const root = await seeded(store);
    const blobs = counting(store);
    const driver = storeDriver({ blobs, root });
    const workspace = createWorkspace(driver);
    await workspace.copy('/d1', '/copy-of-d1', { recursive: true });
    const reads = blobs.gets.length;
    const before = store.size;
    await driver.capture();
    expect(store.size).toBe(before + 1); // only the new root manifest
    expect(blobs.gets.length).toBe(reads);
    expect(await workspace.read('/copy-of-d1/f9.txt')).toMatchObject({ content: 'content 1/9' });
  });

  it('a missing blob is a typed snapshot error, not a crash', async () => {
    const store = memoryBlobStore();
    const root = await seeded(store);
    const workspace = createWorkspace(storeDriver({ blobs: store, root }));
    await workspace.list('/d2');
    for await (const hash of store.list()) await store.delete(hash);
    await expect(workspace.read('/d2/f0.txt')).rejects.toMatchObject({ code: 'ESNAPSHOT' });
  });
});

describe('blob tree: patches', () => {
  const dirs = tempDirs();

  it('patch() between two snapshots and against the live state is what git applies to give the later tree', async () => {
    const workspace = createWorkspace(storeDriver({ blobs: memoryBlobStore() }));
    await workspace.write('src/a.ts', 'export const a = 1;\n');
    await workspace.write('keep.txt', 'same\n');
    await workspace.write('gone.txt', 'bye\n');
    const before = await workspace.snapshot();
    await workspace.write('src/a.ts', 'export const a = 2;\n');
    await workspace.delete('gone.txt');
    await workspace.write('new/b.txt', 'hello\n');
    const after = await workspace.snapshot();
    const patch = await workspace.patch(before, after);
    expect(await workspace.patch(before)).toBe(patch);
    expect(patch).not.toContain('keep.txt');

    const dir = dirs();
    writeTree(dir, { 'src/a.ts': 'export const a = 1;\n', 'keep.txt': 'same\n', 'gone.txt': 'bye\n' });
    await gitApply(dir, patch);
    expect(filesOf(dir)).toEqual({
      'src/a.ts': 'file 100644 export const a = 2;\n',
      'keep.txt': 'file 100644 same\n',
      'new/b.txt': 'file 100644 hello\n',
    });
    await workspace.dispose();
  });
});
