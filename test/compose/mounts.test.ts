import { afterEach, describe, expect, it } from 'vitest';
import { composeDriver, createWorkspace, memoryDriver, type ManagedWorkspace, type MountSpec } from '../../src/index.js';
import { contentsOf, expectError } from '../../src/testing/harness.js';

const opened: ManagedWorkspace[] = [];
afterEach(async () => {
  for (const workspace of opened.splice(0)) await workspace.dispose();
});

/** root (read-write), docs (read-only), logs (append-only), secrets (disabled), scratch (memory, read-write). */
async function layout() {
  const root = createWorkspace(memoryDriver());
  const docs = createWorkspace(memoryDriver());
  const logs = createWorkspace(memoryDriver());
  await root.write('src/index.ts', 'export const root = 1;\n');
  // What the disabled mount must hide: the root mount's own directory of the same name.
  await root.write('secrets/key.txt', 'root-secret\n');
  await docs.write('guide.md', '# Guide\nroot is documented here\n');
  await logs.write('run.log', 'started\n');
  const mounts: MountSpec[] = [
    { path: '/', workspace: root, access: 'read-write' },
    { path: '/docs', workspace: docs, access: 'read-only' },
    { path: '/logs', workspace: logs, access: 'append-only' },
    { path: '/secrets', access: 'disabled' },
    { path: '/tmp/scratch', access: 'read-write' },
  ];
  const ws = createWorkspace(composeDriver({ mounts }));
  opened.push(ws);
  return { ws, root, docs, logs };
}

describe('composeDriver: routing and listing', () => {
  it('routes by longest prefix and shows mount points (and their parents) as directories', async () => {
    const { ws, root, docs } = await layout();
    expect((await ws.list('/')).map((e) => [e.name, e.isDirectory])).toEqual([
      ['docs', true],
      ['logs', true],
      ['src', true],
      ['tmp', true],
    ]);
    expect((await ws.list('tmp')).map((e) => e.path)).toEqual(['tmp/scratch']);
    expect(await ws.read('docs/guide.md')).toMatchObject({ path: 'docs/guide.md', totalLines: 2 });
    await ws.write('tmp/scratch/notes.txt', 'scratch');
    expect(await ws.stat('tmp/scratch')).toMatchObject({ isDirectory: true, path: 'tmp/scratch' });
    expect(await ws.exists('tmp/scratch/notes.txt')).toBe(true);
    expect(await root.exists('tmp/scratch/notes.txt')).toBe(false);
    expect(await docs.exists('docs/guide.md')).toBe(false);
    // "docs2" is not inside "docs".
    await ws.write('docs2/x.txt', 'x');
    expect(await root.read('docs2/x.txt')).toMatchObject({ content: 'x' });
  });

  it('walks, globs and greps across mount points and never into a disabled mount', async () => {
    const { ws } = await layout();
    await ws.write('tmp/scratch/root.txt', 'root in scratch');
    expect((await ws.glob('**/*')).map((m) => m.path)).toEqual(['docs/guide.md', 'logs/run.log', 'src/index.ts', 'tmp/scratch/root.txt']);
    expect((await ws.grep('root')).map((m) => m.path)).toEqual(['docs/guide.md', 'src/index.ts', 'tmp/scratch/root.txt']);
    expect(await ws.grep('root-secret')).toEqual([]);
    expect((await ws.grep('root', { path: 'docs' })).map((m) => `${m.path}:${m.lineNumber}`)).toEqual(['docs/guide.md:2']);
  });

  it('reports errors with the composed path', async () => {
    const { ws } = await layout();
    const error = await expectError(ws.read('docs/missing.md'), 'FileNotFoundError', 'ENOENT');
    expect(error.path).toBe('docs/missing.md');
    expect(error.message).toContain('docs/missing.md');
  });

  it('treats paths no mount holds as a read-only, empty part of the tree', async () => {
    const ws = createWorkspace(composeDriver({ mounts: [{ path: '/work', access: 'read-write' }] }));
    opened.push(ws);
    expect((await ws.list('/')).map((e) => e.name)).toEqual(['work']);
    await expectError(ws.write('outside.txt', 'x'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.mkdir('elsewhere'), 'ReadOnlyError', 'EROFS');
    await ws.write('work/inside.txt', 'x');
    expect(await contentsOf(ws)).toEqual({ 'work/': '', 'work/inside.txt': 'x' });
  });

  it('refuses a malformed mount table', () => {
    const memory = createWorkspace(memoryDriver());
    const bad = [
      [],
      [{ path: '/', workspace: memory, access: 'everything' }],
      [
        { path: '/a', access: 'read-write' },
        { path: 'a/', access: 'read-only' },
      ],
      [
        { path: '/hidden', access: 'disabled' },
        { path: '/hidden/inner', access: 'read-write' },
      ],
      [{ path: '../up', access: 'read-write' }],
      [{ path: '/x', workspace: { read: () => 1 }, access: 'read-only' }],
    ];
    for (const mounts of bad) expect(() => createWorkspace(composeDriver({ mounts: mounts as MountSpec[] }))).toThrow(/mount|path|climbs/);
  });
});

describe('composeDriver: access levels', () => {
  it('read-only: reads work, every mutation raises ReadOnlyError and changes nothing', async () => {
    const { ws, docs } = await layout();
    const before = await contentsOf(docs);
    await expectError(ws.write('docs/guide.md', 'x'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.write('docs/new.md', 'x'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.write('docs/deep/new.md', 'x'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.mkdir('docs/sub'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.delete('docs/guide.md'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.rename('docs/guide.md', 'docs/moved.md'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.rename('docs/guide.md', 'guide.md'), 'ReadOnlyError', 'EROFS');
    await expectError(ws.copy('src/index.ts', 'docs/index.ts'), 'ReadOnlyError', 'EROFS');
    expect(await contentsOf(docs)).toEqual(before);
    expect(await ws.exists('guide.md')).toBe(false);
    await ws.copy('docs/guide.md', 'guide.md');
    expect((await ws.read('guide.md')).content).toBe('# Guide\nroot is documented here');
  });

  it('append-only: creates and appends; overwrite, delete and rename raise PolicyError', async () => {
    const { ws, logs } = await layout();
    await ws.write('logs/run.log', 'step 1\n', { mode: 'append' });
    await ws.write('logs/new.log', 'fresh\n');
    await ws.mkdir('logs/archive');
    await ws.copy('src/index.ts', 'logs/archive/index.ts');
    await expectError(ws.write('logs/run.log', 'replaced'), 'PolicyError', 'EPERM');
    await expectError(ws.delete('logs/run.log'), 'PolicyError', 'EPERM');
    await expectError(ws.rename('logs/run.log', 'logs/old.log'), 'PolicyError', 'EPERM');
    await expectError(ws.rename('logs/run.log', 'run.log'), 'PolicyError', 'EPERM');
    await expectError(ws.copy('src/index.ts', 'logs/new.log', { overwrite: true }), 'PolicyError', 'EPERM');
    expect(await contentsOf(logs)).toEqual({
      'archive/': '',
      'archive/index.ts': 'export const root = 1;\n',
      'new.log': 'fresh\n',
      'run.log': 'started\nstep 1\n',
    });
  });

  it('disabled: invisible everywhere, and never falls through to the mount above', async () => {
    const { ws, root } = await layout();
    expect(await ws.exists('secrets')).toBe(false);
    expect(await ws.exists('secrets/key.txt')).toBe(false);
    await expectError(ws.stat('secrets'), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.read('secrets/key.txt'), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.list('secrets'), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.write('secrets/new.txt', 'x'), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.mkdir('secrets/sub'), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.delete('secrets', { recursive: true }), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.copy('secrets/key.txt', 'stolen.txt'), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.rename('src', 'secrets/src'), 'FileNotFoundError', 'ENOENT');
    expect(await ws.glob('**/*', { dot: true, path: 'secrets' })).toEqual([]);
    expect(await ws.grep('secret', { path: 'secrets' })).toEqual([]);
    expect((await ws.list('/')).map((e) => e.name)).not.toContain('secrets');
    expect((await root.read('secrets/key.txt')).content).toBe('root-secret');
  });

  it('refuses to delete, rename or replace a mount point or a directory holding one', async () => {
    const { ws } = await layout();
    await expectError(ws.delete('tmp/scratch', { recursive: true }), 'PolicyError', 'EPERM');
    await expectError(ws.delete('tmp', { recursive: true }), 'PolicyError', 'EPERM');
    await expectError(ws.rename('tmp', 'tmp2'), 'PolicyError', 'EPERM');
    await ws.mkdir('empty');
    await expectError(ws.rename('empty', 'tmp', { overwrite: true }), 'PolicyError', 'EPERM');
    expect(await ws.exists('tmp/scratch')).toBe(true);
  });
});

describe('composeDriver: across mounts', () => {
  it('copies and renames files and directories from one mount to another', async () => {
    const { ws, root } = await layout();
    await ws.copy('docs/guide.md', 'tmp/scratch/guide.md');
    await ws.rename('src', 'tmp/scratch/src');
    expect(await root.exists('src')).toBe(false);
    expect(await contentsOf(ws, 'tmp')).toEqual({
      'tmp/scratch/': '',
      'tmp/scratch/guide.md': '# Guide\nroot is documented here\n',
      'tmp/scratch/src/': '',
      'tmp/scratch/src/index.ts': 'export const root = 1;\n',
    });
    await ws.write('tmp/scratch/src/index.ts', 'changed');
    await ws.rename('tmp/scratch/src', 'src2');
    expect((await root.read('src2/index.ts')).content).toBe('changed');
  });

  it('copies a directory holding a mount point with what the mount shows', async () => {
    const { ws } = await layout();
    await ws.write('tmp/scratch/a.txt', 'a');
    await ws.copy('tmp', 'backup', { recursive: true });
    expect(await contentsOf(ws, 'backup')).toEqual({ 'backup/scratch/': '', 'backup/scratch/a.txt': 'a' });
  });
});

describe('composeDriver: snapshots span every mount', () => {
  it('restores read-write mounts together, keeps appended logs and never writes read-only mounts', async () => {
    const { ws, docs, logs } = await layout();
    const before = await ws.snapshot({ tag: 'before' });
    expect(before).toMatchObject({ backend: 'compose', tag: 'before' });
    await ws.rename('src/index.ts', 'tmp/scratch/index.ts');
    await ws.write('logs/run.log', 'appended\n', { mode: 'append' });
    await docs.write('guide.md', 'changed behind the composition\n');
    expect(await ws.diff(before)).toEqual([
      { path: 'docs/guide.md', status: 'modified' },
      { path: 'logs/run.log', status: 'modified' },
      { path: 'src/index.ts', status: 'deleted' },
      { path: 'tmp/scratch/index.ts', status: 'added' },
    ]);
    await ws.restore(JSON.parse(JSON.stringify(before)));
    expect(await ws.exists('tmp/scratch/index.ts')).toBe(false);
    expect((await ws.read('src/index.ts')).content).toBe('export const root = 1;');
    expect((await logs.read('run.log')).content).toBe('started\nappended');
    expect((await docs.read('guide.md')).content).toBe('changed behind the composition');
  });

  it('diffs two composed snapshots and refuses records it did not take', async () => {
    const { ws } = await layout();
    const first = await ws.snapshot();
    await ws.write('tmp/scratch/new.txt', 'new');
    const second = await ws.snapshot();
    expect(await ws.diff(first, second)).toEqual([{ path: 'tmp/scratch/new.txt', status: 'added' }]);
    const other = createWorkspace(composeDriver({ mounts: [{ path: '/', access: 'read-write' }] }));
    opened.push(other);
    await expectError(other.restore(first), 'SnapshotRestoreError', 'ESNAPSHOT');
    await expectError(ws.restore({ ...first, ref: `${first.ref}0` }), 'SnapshotRestoreError', 'ESNAPSHOT');
  });

  /** Memory mounts at /a and /bb, an empty snapshot, then a file in each. */
  async function twoMountsWithFiles() {
    const a = createWorkspace(memoryDriver());
    const ws = createWorkspace(
      composeDriver({
        mounts: [
          { path: '/a', workspace: a, access: 'read-write' },
          { path: '/bb', workspace: createWorkspace(memoryDriver()), access: 'read-write' },
        ],
      }),
    );
    opened.push(ws);
    const empty = await ws.snapshot();
    await ws.write('a/file.txt', 'a');
    await ws.write('bb/file.txt', 'b');
    return { a, ws, empty };
  }

  it('a failed restore puts every mount back as it was', async () => {
    const { a, ws, empty } = await twoMountsWithFiles();
    // Mounts restore longest path first, so /bb is restored, then /a fails (sealed behind the composition's back).
    a.seal();
    await expect(ws.restore(empty)).rejects.toThrow();
    expect(await contentsOf(ws)).toEqual({ 'a/': '', 'a/file.txt': 'a', 'bb/': '', 'bb/file.txt': 'b' });
  });

  it('a mount whose own restore fails part way is put back too', async () => {
    const { a, ws, empty } = await twoMountsWithFiles();
    // /bb is restored first, then /a's restore changes something and fails (as a host restore can, part way).
    const restore = a.restore.bind(a);
    let failed = false;
    a.restore = async (snapshot, options) => {
      if (failed) return restore(snapshot, options);
      failed = true;
      await a.write('partial.txt', 'half restored');
      throw new Error('disk full');
    };
    await expect(ws.restore(empty)).rejects.toThrow('disk full');
    expect(await contentsOf(ws)).toEqual({ 'a/': '', 'a/file.txt': 'a', 'bb/': '', 'bb/file.txt': 'b' });
  });
});

describe('composeDriver: patches span every mount', () => {
  it('reads a composed snapshot as one tree and writes one git patch across mounts', async () => {
    const { ws } = await layout();
    const before = await ws.snapshot();
    await ws.write('tmp/scratch/new.txt', 'new\n');
    await ws.write('src/index.ts', 'export const root = 2;\n');
    await ws.write('logs/run.log', 'more\n', { mode: 'append' });
    const tree = await ws.snapshotTree(before);
    expect(await tree.entry('tmp/scratch')).toMatchObject({ kind: 'directory' });
    expect(await tree.entry('secrets/key.txt')).toBeUndefined();
    const paths: string[] = [];
    for await (const entry of tree.entries()) paths.push(`${entry.kind[0]} ${entry.path}`);
    expect(paths.sort()).toEqual([
      'd docs',
      'd logs',
      'd src',
      'd tmp',
      'd tmp/scratch',
      'f docs/guide.md',
      'f logs/run.log',
      'f src/index.ts',
    ]);
    const patch = await ws.patch(before);
    expect(patch).toContain('diff --git a/src/index.ts b/src/index.ts');
    expect(patch).toContain('diff --git a/tmp/scratch/new.txt b/tmp/scratch/new.txt');
    expect(patch).toContain('diff --git a/logs/run.log b/logs/run.log');
    expect(patch).not.toContain('secrets');
  });
});
