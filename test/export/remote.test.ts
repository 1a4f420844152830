import { chmodSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { GitStore, type TreeEntry } from '../../src/backends/host/git/store.js';
import { pullSnapshot, pushSnapshot } from '../../src/export/remote.js';
import { protocolFiles } from './edits.js';
import { tempDirs } from '../../src/testing/harness.js';
import { filesOf } from '../support/host-files.js';
import { materialize } from './support.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { kvDriver } from '../../examples/kv-backend.js';

describe('pushSnapshot / pullSnapshot', () => {
  const tempDir = tempDirs();
  const bareRemote = async (): Promise<string> => {
    const remote = join(tempDir(), 'remote.git');
    await execa('git', ['init', '--bare', '-q', remote]);
    return remote;
  };

  it('carries a session memory → remote → host → remote → memory, bit-exact, empty directories included', async () => {
    const remote = await bareRemote();
    const memory = createWorkspace(memoryDriver());
    await memory.write('src/app.ts', 'export {};\n');
    await memory.writeBytes('data.bin', Uint8Array.from([0, 255, 1, 2]));
    await memory.write('%odd/.git/x', 'escaped names');
    await memory.mkdir('empty/inner');
    const snapshot = await memory.snapshot({ tag: 'work' });
    const pushed = await pushSnapshot(memory, snapshot, { remote });
    expect(pushed).toEqual({ remote, ref: `refs/sessionfs/snapshots/${snapshot.id}`, commit: expect.stringMatching(/^[0-9a-f]{40}$/) });
    // Native git sees an ordinary commit.
    const listed = await execa('git', ['--git-dir', remote, 'ls-tree', '-r', '--name-only', pushed.commit]);
    expect(listed.stdout.split('\n')).toContain('src/app.ts');

    const host = createWorkspace(hostDriver());
    await host.write('stale.txt', 'removed by the pull');
    const pulled = await pullSnapshot(host, { remote, ref: pushed.ref });
    expect(pulled.backend).toBe('host');
    expect(filesOf(host.root)).toEqual({
      '%odd/.git/x': 'file 100644 escaped names',
      'data.bin': 'file 100644 \u0000\u00ff\u0001\u0002',
      'src/app.ts': 'file 100644 export {};\n',
    });
    expect(await host.list('empty')).toMatchObject([{ name: 'inner', isDirectory: true }]);

    // The host adds an exec bit and a link; they survive a round trip to another host workspace.
    chmodSync(join(host.root, 'src/app.ts'), 0o755);
    symlinkSync('src/app.ts', join(host.root, 'link'));
    const second = await pushSnapshot(host, await host.snapshot(), { remote, ref: 'refs/sessionfs/sessions/s1/latest' });
    const other = createWorkspace(hostDriver());
    await pullSnapshot(other, { remote, ref: second.ref });
    expect(filesOf(other.root)).toEqual(filesOf(host.root));
    expect(await other.list('empty')).toMatchObject([{ name: 'inner', isDirectory: true }]);

    // Into memory: the link and the exec bit come along exactly.
    const kinds = createWorkspace(memoryDriver());
    await kinds.write('link', 'a file the link replaces');
    await pullSnapshot(kinds, { remote, ref: second.ref });
    expect(await protocolFiles(kinds)).toEqual(filesOf(host.root));
    // A backend without kinds refuses a tree holding them, and nothing changes.
    const back = createWorkspace(kvDriver());
    await back.write('keep.txt', 'k');
    await expect(pullSnapshot(back, { remote, ref: second.ref })).rejects.toMatchObject({ name: 'NotSupportedError', code: 'ENOTSUP' });
    expect(await protocolFiles(back)).toEqual({ 'keep.txt': 'file 100644 k' });
    const first = await pullSnapshot(back, { remote, ref: pushed.ref });
    expect(await back.patch(first)).toBe('');
    expect(await memory.patch(snapshot)).toBe('');
    expect(await protocolFiles(back)).toEqual(await protocolFiles(memory));
    expect(await back.list('empty')).toMatchObject([{ name: 'inner', isDirectory: true }]);

    for (const workspace of [memory, host, other, kinds, back]) await workspace.dispose();
  });

  it('pulls into a tracked host workspace and snapshots what it wrote', async () => {
    const remote = await bareRemote();
    const source = createWorkspace(hostDriver());
    await source.write('a/b.txt', 'b');
    chmodSync(join(source.root, 'a/b.txt'), 0o755);
    const pushed = await pushSnapshot(source, await source.snapshot(), { remote });
    const tracked = createWorkspace(hostDriver({ changeDetection: 'tracked' }));
    await tracked.write('old.txt', 'o');
    await tracked.snapshot();
    const pulled = await pullSnapshot(tracked, { remote, ref: pushed.ref });
    const copy = tempDir();
    await materialize(await tracked.snapshotTree(pulled), copy);
    expect(filesOf(copy)).toEqual({ 'a/b.txt': 'file 100755 b' });
    expect(filesOf(tracked.root)).toEqual({ 'a/b.txt': 'file 100755 b' });
    await source.dispose();
    await tracked.dispose();
  });

  it('is deterministic and refuses to replace a ref unless forced', async () => {
    const remote = await bareRemote();
    const workspace = createWorkspace(memoryDriver());
    await workspace.write('a.txt', 'a');
    const snapshot = await workspace.snapshot();
    const ref = 'refs/sessionfs/test';
    const first = await pushSnapshot(workspace, snapshot, { remote, ref });
    expect((await pushSnapshot(workspace, snapshot, { remote, ref })).commit).toBe(first.commit);
    await workspace.write('a.txt', 'b');
    const later = await workspace.snapshot();
    await expect(pushSnapshot(workspace, later, { remote, ref })).rejects.toMatchObject({ code: 'ECONFLICT' });
    const forced = await pushSnapshot(workspace, later, { remote, ref, force: true });
    expect(forced.commit).not.toBe(first.commit);
    await workspace.dispose();
  });

  it('keeps each session under its own refs', async () => {
    const remote = await bareRemote();
    const workspace = createWorkspace(memoryDriver());
    await workspace.write('a.txt', 'a');
    const snapshot = await workspace.snapshot();
    const mine = await pushSnapshot(workspace, snapshot, { remote, session: 'alice/run 1' });
    const theirs = await pushSnapshot(workspace, snapshot, { remote, session: 'bob' });
    expect(mine.ref).toBe(`refs/sessionfs/sessions/alice%2Frun%201/${snapshot.id}`);
    expect(theirs.ref).toBe(`refs/sessionfs/sessions/bob/${snapshot.id}`);
    const refs = await execa('git', ['--git-dir', remote, 'for-each-ref', '--format=%(refname)']);
    expect(refs.stdout.split('\n').sort()).toEqual([mine.ref, theirs.ref].sort());
    await workspace.dispose();
  });

  it('refuses a crafted remote tree whose names would leave the workspace, changing nothing', async () => {
    const remote = await bareRemote();
    const store = new GitStore(remote);
    const blob = store.writeObject('blob', new TextEncoder().encode('escaped'));
    const crafted: TreeEntry[][] = [
      [{ name: '..', mode: '40000', oid: store.writeTree([{ name: 'x', mode: '100644', oid: blob }]) }],
      [{ name: '%..', mode: '100644', oid: blob }],
      [{ name: 'a/b', mode: '100644', oid: blob }],
      [{ name: 'sub', mode: '160000' as TreeEntry['mode'], oid: blob }],
      [
        { name: 'x', mode: '100644', oid: blob },
        { name: '%x', mode: '100644', oid: blob },
      ],
    ];
    const host = createWorkspace(hostDriver());
    await host.write('keep.txt', 'k');
    for (const [index, entries] of crafted.entries()) {
      const commit = store.writeCommit(store.writeTree(entries), 'crafted', new Date(0));
      store.writeRef(`refs/crafted/${index}`, commit);
      await expect(pullSnapshot(host, { remote, ref: `refs/crafted/${index}` })).rejects.toMatchObject({ code: 'ESNAPSHOT' });
    }
    expect(filesOf(host.root)).toEqual({ 'keep.txt': 'file 100644 k' });
    await host.dispose();
  });

  it('refuses bad input', async () => {
    const workspace = createWorkspace(memoryDriver());
    const snapshot = await workspace.snapshot();
    await expect(pushSnapshot(workspace, snapshot, { remote: '--upload-pack=evil' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(pushSnapshot(workspace, snapshot, { remote: tempDir(), ref: 'main' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(pushSnapshot(workspace, snapshot, { remote: tempDir(), ref: 'refs/.hidden/x' })).rejects.toMatchObject({ code: 'EINVAL' });
    // The ext:: transport runs a command: refused before git runs (see remote-transports.test.ts).
    const marker = join(tempDir(), 'ran');
    await expect(pullSnapshot(workspace, { remote: `ext::sh -c touch% ${marker}`, ref: 'refs/x' })).rejects.toMatchObject({
      code: 'EINVAL',
    });
    await expect(execa('test', ['-e', marker])).rejects.toThrow();
    await expect(pullSnapshot(workspace, { remote: join(tempDir(), 'missing'), ref: 'refs/x' })).rejects.toMatchObject({
      code: 'ESNAPSHOT',
    });
    await workspace.dispose();
  });
});
