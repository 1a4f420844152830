import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { GitStore } from '../../src/backends/host/git/store.js';
import { expectError } from '../../src/testing/harness.js';
import { gitEnv, scratch, hostOf } from './support.js';

describe('host restore, records and diff', () => {
  const { workspace, dir } = scratch();

  it('rewrites only what differs: unchanged files keep their inode', async () => {
    const ws = workspace();
    for (let i = 0; i < 20; i += 1) await ws.write(`d${i % 4}/f${i}.txt`, `file ${i}`);
    const snap = await ws.snapshot();
    await ws.write('d1/f1.txt', 'changed');
    await ws.delete('d2/f2.txt');
    await ws.write('d9/new.txt', 'new');
    const inode = (p: string) => fs.lstatSync(join(ws.root, p)).ino;
    const untouched = inode('d0/f0.txt');
    const untouchedDir = inode('d3');
    await ws.restore(snap);
    expect(inode('d0/f0.txt')).toBe(untouched);
    expect(inode('d3')).toBe(untouchedDir);
    expect((await ws.read('d1/f1.txt')).content).toBe('file 1');
    expect((await ws.read('d2/f2.txt')).content).toBe('file 2');
    expect(await ws.exists('d9')).toBe(false);
  });

  it('never writes through a link planted since the snapshot: file or directory become links', async () => {
    const ws = workspace();
    const outside = dir('sessionfs-outside-');
    fs.writeFileSync(join(outside, 'victim.txt'), 'victim');
    fs.mkdirSync(join(outside, 'victim-dir'));
    await ws.write('file.txt', 'original');
    await ws.write('dir/inner.txt', 'inner');
    const snap = await ws.snapshot();
    fs.rmSync(join(ws.root, 'file.txt'));
    fs.symlinkSync(join(outside, 'victim.txt'), join(ws.root, 'file.txt'));
    fs.rmSync(join(ws.root, 'dir'), { recursive: true });
    fs.symlinkSync(join(outside, 'victim-dir'), join(ws.root, 'dir'));
    await ws.restore(snap);
    expect(fs.readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('victim');
    expect(fs.readdirSync(join(outside, 'victim-dir'))).toEqual([]);
    expect(fs.lstatSync(join(ws.root, 'file.txt')).isFile()).toBe(true);
    expect(fs.lstatSync(join(ws.root, 'dir')).isDirectory()).toBe(true);
    expect((await ws.read('dir/inner.txt')).content).toBe('inner');
  });

  it('restores in any order (v1, write, v3, v2) and removes everything added since', async () => {
    const ws = workspace();
    await ws.write('a.txt', 'v1');
    const v1 = await ws.snapshot();
    await ws.write('a.txt', 'v2');
    await ws.write('b/c.txt', 'c');
    const v2 = await ws.snapshot();
    await ws.restore(v1);
    expect((await ws.list()).map((e) => e.name)).toEqual(['a.txt']);
    await ws.write('z.txt', 'z');
    const v3 = await ws.snapshot();
    await ws.restore(v2);
    expect((await ws.read('a.txt')).content).toBe('v2');
    expect((await ws.read('b/c.txt')).content).toBe('c');
    expect(await ws.exists('z.txt')).toBe(false);
    await ws.restore(v3);
    expect((await ws.list()).map((e) => e.name)).toEqual(['a.txt', 'z.txt']);
  });

  it('leaves excluded paths untouched and reports the entries it had to skip', async () => {
    const ws = workspace({ exclude: ['node_modules/**', '**/*.log'] });
    await ws.write('node_modules/pkg/index.js', 'dep v1');
    await ws.write('src/app.ts', 'app');
    await ws.write('build', 'a file named build');
    const snap = await ws.snapshot();
    await ws.write('node_modules/pkg/index.js', 'dep v2');
    await ws.write('node_modules/new/index.js', 'new dep');
    await ws.delete('build');
    await ws.write('build/trace.log', 'excluded log inside a new directory');
    await ws.write('build/out.js', 'not excluded');
    await ws.write('src/app.ts', 'changed');
    const result = await ws.restore(snap);
    expect(result.skipped).toEqual([{ path: 'build', reason: expect.any(String) }]);
    expect((await ws.read('node_modules/pkg/index.js')).content).toBe('dep v2');
    expect((await ws.read('node_modules/new/index.js')).content).toBe('new dep');
    expect((await ws.read('build/trace.log')).content).toBe('excluded log inside a new directory');
    expect(await ws.exists('build/out.js')).toBe(false);
    expect((await ws.read('src/app.ts')).content).toBe('app');
    // The snapshot never held the excluded files.
    expect((await ws.diff(snap)).map((d) => d.path)).toEqual(['build']);
    // A directory that is not in the snapshot stays when excluded content is inside it, and is reported.
    await ws.write('logs/run.log', 'excluded');
    await ws.write('logs/keep-out.txt', 'removed');
    const second = await ws.restore(snap);
    expect(second.skipped.map((s) => s.path)).toEqual(['logs', 'build']);
    expect(fs.readdirSync(join(ws.root, 'logs'))).toEqual(['run.log']);
  });

  it('restores a record read back from JSON in another workspace on the same git dir', async () => {
    const root = dir();
    const gitDir = dir('sessionfs-git-');
    const first = workspace({ root, gitDir });
    await first.write('keep.txt', 'kept');
    await first.mkdir('empty');
    const json = JSON.stringify(await first.snapshot({ tag: 'before' }));
    await first.dispose();
    expect(fs.existsSync(root) && fs.existsSync(gitDir)).toBe(true);
    fs.writeFileSync(join(root, 'keep.txt'), 'clobbered');
    fs.writeFileSync(join(root, 'extra.txt'), 'extra');
    const second = workspace({ root, gitDir, changeDetection: 'tracked' });
    const record = JSON.parse(json);
    expect(record).toMatchObject({ backend: 'host', gitDir: fs.realpathSync(gitDir), tag: 'before' });
    expect(await second.diff(record)).toEqual([
      { path: 'extra.txt', status: 'added' },
      { path: 'keep.txt', status: 'modified' },
    ]);
    await second.restore(record);
    expect(fs.readdirSync(root).sort()).toEqual(['empty', 'keep.txt']);
    expect(fs.readFileSync(join(root, 'keep.txt'), 'utf8')).toBe('kept');
  });

  it('survives `git gc` on its git dir: every snapshot is kept (packed refs, delta packs) and still restores', async () => {
    const root = dir();
    const gitDir = dir('sessionfs-git-');
    const ws = workspace({ root, gitDir });
    const big = (n: number) => Array.from({ length: 400 }, (_, i) => `line ${i} ${i === n ? 'changed' : ''}`).join('\n');
    await ws.write('a.txt', big(-1));
    const v1 = await ws.snapshot();
    await ws.write('a.txt', big(7));
    await ws.write('b/c.txt', 'c');
    const v2 = await ws.snapshot();
    execFileSync('git', ['--git-dir', gitDir, 'gc', '--aggressive', '--prune=now', '--quiet'], { env: gitEnv });
    expect(fs.existsSync(join(gitDir, 'refs', 'sessionfs', v1.id))).toBe(false); // now in packed-refs
    const again = workspace({ root, gitDir });
    await again.restore(JSON.parse(JSON.stringify(v1)));
    expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe(big(-1));
    expect(fs.existsSync(join(root, 'b'))).toBe(false);
    await again.restore(v2);
    expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe(big(7));
    expect(await again.diff(v1, v2)).toEqual([
      { path: 'a.txt', status: 'modified' },
      { path: 'b/c.txt', status: 'added' },
    ]);
  });

  it('refuses records that are not snapshots of this git dir with SnapshotRestoreError, changing nothing', async () => {
    const ws = workspace();
    const other = workspace();
    await ws.write('a.txt', 'live');
    const mine = await ws.snapshot();
    await other.write('a.txt', 'other');
    const theirs = await other.snapshot();
    // A commit that is in the repository but is not a snapshot, under our ref namespace.
    const store = new GitStore(hostOf(ws).gitDir);
    const emptyTree = store.writeTree([]);
    const foreignId = '00000000-0000-4000-8000-000000000000';
    store.writeRef(`refs/sessionfs/${foreignId}`, store.writeCommit(emptyTree, 'not a snapshot\n', new Date()));
    await ws.write('a.txt', 'changed after');
    const cases = [
      theirs,
      { ...theirs, gitDir: hostOf(ws).gitDir },
      { ...mine, ref: 'refs/heads/main' },
      { ...mine, ref: '../../../etc/passwd' },
      { ...mine, id: foreignId, ref: `refs/sessionfs/${foreignId}` },
      { ...mine, id: '11111111-1111-4111-8111-111111111111', ref: 'refs/sessionfs/11111111-1111-4111-8111-111111111111' },
      { ...mine, backend: 'memory' as const },
      { ...mine, gitDir: undefined },
      { nonsense: true },
    ];
    for (const record of cases) {
      await expectError(ws.restore(record as never), 'SnapshotRestoreError', 'ESNAPSHOT', { hostPaths: [ws.root] });
      await expectError(ws.diff(record as never), 'SnapshotRestoreError', 'ESNAPSHOT', { hostPaths: [ws.root] });
    }
    expect((await ws.read('a.txt')).content).toBe('changed after');
    await ws.restore(mine);
    expect((await ws.read('a.txt')).content).toBe('live');
  });

  it('diffs two snapshots and the live state, skipping equal subtrees without reading them', async () => {
    const ws = workspace();
    for (let d = 0; d < 30; d += 1) for (let f = 0; f < 5; f += 1) await ws.write(`dir${d}/sub/f${f}.txt`, `${d}-${f}`);
    await ws.write('file-then-dir', 'file');
    const a = await ws.snapshot();
    await ws.write('dir7/sub/f1.txt', 'changed');
    await ws.delete('dir8/sub/f2.txt');
    await ws.write('dir9/sub/new.txt', 'new');
    await ws.delete('file-then-dir');
    await ws.write('file-then-dir/inside.txt', 'inside');
    await ws.mkdir('only-an-empty-dir');
    const b = await ws.snapshot();
    const readTree = vi.spyOn(GitStore.prototype, 'readTree');
    const expected = [
      { path: 'dir7/sub/f1.txt', status: 'modified' },
      { path: 'dir8/sub/f2.txt', status: 'deleted' },
      { path: 'dir9/sub/new.txt', status: 'added' },
      { path: 'file-then-dir', status: 'deleted' },
      { path: 'file-then-dir/inside.txt', status: 'added' },
    ];
    expect(await ws.diff(a, b)).toEqual(expected);
    // Root, three changed directories and their `sub`s (both sides), two new directories: 16, against ~120 for a full walk.
    expect(readTree.mock.calls.length).toBeLessThanOrEqual(16);
    readTree.mockRestore();
    expect(await ws.diff(a)).toEqual(expected);
    expect(await ws.diff(b, a)).toEqual(
      expected
        .map((e) => ({ ...e, status: e.status === 'added' ? 'deleted' : e.status === 'deleted' ? 'added' : 'modified' }))
        .sort((x, y) => (x.path < y.path ? -1 : 1)),
    );
  });

  it('keeps snapshots under its own refs, with a fixed author, whatever GIT_* variables say', async () => {
    const ws = workspace();
    await ws.write('a.txt', 'a');
    const saved = { ...process.env };
    Object.assign(process.env, {
      GIT_AUTHOR_NAME: 'intruder',
      GIT_DIR: '/nonexistent',
      GIT_INDEX_FILE: '/nonexistent/index',
      GIT_OBJECT_DIRECTORY: '/nonexistent',
    });
    let snap;
    try {
      snap = await ws.snapshot();
    } finally {
      for (const key of ['GIT_AUTHOR_NAME', 'GIT_DIR', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY']) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
    expect(snap.ref).toBe(`refs/sessionfs/${snap.id}`);
    const store = new GitStore(hostOf(ws).gitDir);
    const commit = await store.resolveRef(snap.ref);
    const object = await store.readObject(commit as string);
    expect(object.content.toString()).toMatch(/^author sessionfs <sessionfs@localhost> \d+ \+0000$/m);
    expect(fs.existsSync(join(ws.root, '.git'))).toBe(false);
  });
});
