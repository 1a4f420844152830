import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { encodeManifest, putBlob, sha256 } from '../../src/snapshots/manifest.js';
import { storeDriver } from '../../src/store/store-driver.js';
import { describeWorkspaceCompliance, kindsOf, plantKinds, type CreateOptions } from '../../src/testing/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { driverWith } from '../../src/workspace/driver-proxy.js';

/**
 * A driver with file kinds and no snapshots of its own, as a third-party driver with the optional
 * primitives is: its workspace snapshots through the shared layer's `BlobSnapshotter` (and cannot fork:
 * memory's fork would bring memory's snapshots back).
 */
const sharedSnapshots = (options?: CreateOptions) =>
  createWorkspace(driverWith(memoryDriver(), { snapshots: undefined, fork: undefined }), options);

describeWorkspaceCompliance('memory driver under the shared BlobSnapshotter', { create: async (options) => sharedSnapshots(options) });

describe('BlobSnapshotter: file kinds', () => {
  it('uses the shared snapshotter here (the compliance run above is about it)', async () => {
    const ws = sharedSnapshots();
    expect((await ws.snapshot()).ref).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('captures a write made through a link that was retargeted before the next snapshot', async () => {
    const ws = sharedSnapshots();
    await ws.write('a.txt', 'a');
    await ws.write('b.txt', 'b');
    const before = await ws.snapshot();
    await ws.symlink('a.txt', 'link');
    await ws.write('link', 'written through the link');
    await ws.delete('link');
    await ws.symlink('b.txt', 'link');
    const after = await ws.snapshot();
    expect((await ws.diff(before, after)).map((entry) => `${entry.status} ${entry.path}`)).toEqual(['modified a.txt', 'added link']);
    await ws.restore(before);
    await ws.restore(after);
    expect((await ws.read('a.txt')).content).toBe('written through the link');
  });

  it('captures a write through a link to a directory that existed at the last snapshot', async () => {
    const ws = sharedSnapshots();
    await ws.write('real/x.txt', 'old');
    await ws.symlink('real', 'alias');
    const before = await ws.snapshot();
    await ws.write('alias/x.txt', 'new');
    await ws.setExecutable('alias/x.txt', true);
    expect((await ws.diff(before)).map((entry) => `${entry.status} ${entry.path}`)).toEqual(['modified real/x.txt']);
    const after = await ws.snapshot();
    await ws.restore(before);
    expect(await kindsOf(ws)).toMatchObject({ 'real/x.txt': '100644 old', alias: '120000 real' });
    await ws.restore(after);
    expect(await kindsOf(ws)).toMatchObject({ 'real/x.txt': '100755 new', alias: '120000 real' });
  });

  it('restores a mode change alone, a file become a link and a link become a directory', async () => {
    const ws = sharedSnapshots();
    await plantKinds(ws);
    const planted = await kindsOf(ws);
    const snapshot = await ws.snapshot();
    await ws.setExecutable('bin/run.sh', false);
    await ws.delete('src/lib/a.txt');
    await ws.symlink('../../bin/run.sh', 'src/lib/a.txt');
    await ws.delete('lib-dir');
    await ws.write('lib-dir/inside.txt', 'x');
    await ws.delete('dangling');
    await ws.write('dangling', 'a file now');
    await ws.restore(snapshot);
    expect(await kindsOf(ws)).toEqual(planted);
    expect(await ws.diff(snapshot)).toEqual([]);
  });
});

describe('manifests: kinds and the stored format', () => {
  it('a tree of plain files and directories hashes as before kinds, so stored sessions keep their hashes', async () => {
    const blobs = memoryBlobStore();
    const ws = createWorkspace(storeDriver({ blobs }));
    await ws.write('dir/a.txt', 'a');
    const file = sha256(new TextEncoder().encode('a'));
    const dir = sha256(encodeManifest([['a.txt', 'f', file, 1]]));
    // The manifest of the days before kinds, written by hand: `[name, 'f' | 'd', hash, size]` lines.
    expect((await ws.snapshot()).ref).toBe(`sha256:${sha256(new TextEncoder().encode(JSON.stringify([['dir', 'd', dir, 0]])))}`);
  });

  it('an executable file is `x` and a link `l` with its target as a blob', async () => {
    const blobs = memoryBlobStore();
    const driver = storeDriver({ blobs });
    const ws = createWorkspace(driver);
    await ws.write('run.sh', 'echo\n', { executable: true });
    await ws.symlink('run.sh', 'link');
    const { root } = await driver.capture();
    const manifest = JSON.parse(new TextDecoder().decode(await blobs.get(root))) as unknown;
    expect(manifest).toEqual([
      ['link', 'l', sha256(new TextEncoder().encode('run.sh')), 6],
      ['run.sh', 'x', sha256(new TextEncoder().encode('echo\n')), 5],
    ]);
  });

  it('refuses a manifest line of a kind it does not know (SnapshotRestoreError), reading nothing wrong', async () => {
    const blobs = memoryBlobStore();
    const file = await putBlob(blobs, new TextEncoder().encode('x'));
    const root = await putBlob(blobs, new TextEncoder().encode(JSON.stringify([['odd', 'q', file, 1]])));
    const ws = createWorkspace(storeDriver({ blobs, root }));
    await expect(ws.read('odd')).rejects.toMatchObject({ name: 'SnapshotRestoreError' });
  });
});
