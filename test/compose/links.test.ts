import { afterEach, describe, expect, it } from 'vitest';
import { kvDriver } from '../../examples/kv-backend.js';
import { composeDriver, createWorkspace, memoryDriver, type ManagedWorkspace, type MountSpec } from '../../src/index.js';
import { expectError } from '../../src/testing/harness.js';
import { kindsOf } from '../../src/testing/file-kinds.js';

const opened: ManagedWorkspace[] = [];
afterEach(async () => {
  for (const workspace of opened.splice(0)) await workspace.dispose();
});

function compose(mounts: MountSpec[]): ManagedWorkspace {
  const ws = createWorkspace(composeDriver({ mounts }));
  opened.push(ws);
  return ws;
}

/**
 * A root mount holding, under `data/` and `vault/`, files of its own that the nested mounts shadow; `data`
 * a second memory workspace, `vault` disabled, `plain` a driver without file kinds.
 */
async function layout() {
  const root = createWorkspace(memoryDriver());
  const data = createWorkspace(memoryDriver());
  await root.write('src/index.ts', 'root\n');
  await root.write('data/x.txt', 'shadowed by the data mount\n');
  await root.write('vault/key.txt', 'shadowed by the disabled mount\n');
  await data.write('x.txt', 'in the data mount\n');
  const ws = compose([
    { path: '/', workspace: root, access: 'read-write' },
    { path: '/data', workspace: data, access: 'read-write' },
    { path: '/vault', access: 'disabled' },
    { path: '/plain', workspace: createWorkspace(kvDriver()), access: 'read-write' },
  ]);
  return { ws, root, data };
}

describe('composeDriver: a link never crosses a mount', () => {
  it('follows links inside one mount, at the root mount and in a nested one', async () => {
    const { ws } = await layout();
    await ws.symlink('src/index.ts', 'index-link');
    await ws.symlink('x.txt', 'data/alias');
    await ws.symlink('../src', 'nested/src-up');
    expect((await ws.read('index-link')).content).toBe('root');
    expect((await ws.read('data/alias')).content).toBe('in the data mount');
    expect((await ws.read('nested/src-up/index.ts')).content).toBe('root');
    expect(await ws.stat('data/alias')).toMatchObject({ isSymlink: true, isFile: true, linkTarget: 'x.txt' });
  });

  it('refuses a link into a nested mount: neither the mount nor what it shadows is reached, and nothing is written', async () => {
    const { ws, root, data } = await layout();
    await ws.symlink('data/x.txt', 'to-data');
    await ws.symlink('data', 'to-data-dir');
    await ws.symlink('../data/x.txt', 'sub/climb-in');
    await ws.symlink('to-data-dir', 'chain');
    await ws.symlink('missing/../data/new.txt', 'lexical');
    for (const link of ['to-data', 'sub/climb-in', 'chain/x.txt']) {
      await expectError(ws.read(link), 'PathEscapeError', 'EACCES');
      await expectError(ws.stat(link), 'PathEscapeError', 'EACCES');
      await expectError(ws.write(link, 'planted'), 'PathEscapeError', 'EACCES');
      expect(await ws.exists(link)).toBe(false);
    }
    await expectError(ws.list('to-data-dir'), 'PathEscapeError', 'EACCES');
    await expectError(ws.write('to-data-dir/new.txt', 'x'), 'PathEscapeError', 'EACCES');
    await expectError(ws.mkdir('to-data-dir/made'), 'PathEscapeError', 'EACCES');
    await expectError(ws.setExecutable('to-data', true), 'PathEscapeError', 'EACCES');
    await expectError(ws.write('lexical', 'x'), 'PathEscapeError', 'EACCES');
    // The links themselves are data: listed as links, read with readlink, never searched through.
    expect(await ws.readlink('to-data')).toBe('data/x.txt');
    expect((await ws.list('/')).filter((entry) => entry.isSymlink).map((entry) => entry.name)).toEqual([
      'chain',
      'lexical',
      'to-data',
      'to-data-dir',
    ]);
    expect((await ws.grep('shadowed|in the data mount')).map((match) => match.path)).toEqual(['data/x.txt']);
    expect((await root.read('data/x.txt')).content).toBe('shadowed by the data mount');
    expect(await root.exists('data/new.txt')).toBe(false);
    expect(await data.list('/')).toEqual([expect.objectContaining({ name: 'x.txt' })]);
    expect((await data.stat('x.txt')).executable).toBe(false);
  });

  it('refuses a link into a disabled mount, never revealing what it hides', async () => {
    const { ws } = await layout();
    await ws.symlink('vault/key.txt', 'to-vault');
    await expectError(ws.read('to-vault'), 'PathEscapeError', 'EACCES');
    expect(await ws.grep('shadowed by the disabled')).toEqual([]);
  });

  it('refuses a link climbing out of a nested mount, and an absolute target in a mount holding nested ones', async () => {
    const { ws } = await layout();
    await ws.symlink('../src/index.ts', 'data/up');
    await ws.symlink('/src/index.ts', 'absolute');
    await expectError(ws.read('data/up'), 'PathEscapeError', 'EACCES');
    await expectError(ws.read('absolute'), 'PathEscapeError', 'EACCES');
  });

  it('copies and renames links and executable files from one mount to another as they are', async () => {
    const { ws, data } = await layout();
    await ws.write('bin/tool', 'tool\n', { executable: true });
    await ws.symlink('tool', 'bin/tool-link');
    await ws.copy('bin', 'data/bin', { recursive: true });
    await ws.rename('bin/tool-link', 'data/moved-link');
    expect(await kindsOf(data)).toMatchObject({
      'bin/tool': '100755 tool\n',
      'bin/tool-link': '120000 tool',
      'moved-link': '120000 tool',
      'x.txt': '100644 in the data mount\n',
    });
    expect(await ws.exists('bin/tool-link')).toBe(false);
    // Moved to another directory, a relative link leads elsewhere: still only inside its new mount.
    await expectError(ws.read('data/moved-link'), 'FileNotFoundError', 'ENOENT');
  });

  it('a mount without file kinds answers NotSupportedError; the area no mount holds is read-only', async () => {
    const { ws } = await layout();
    await ws.write('plain/f.txt', 'x');
    await expectError(ws.symlink('f.txt', 'plain/link'), 'NotSupportedError', 'ENOTSUP');
    await expectError(ws.setExecutable('plain/f.txt', true), 'NotSupportedError', 'ENOTSUP');
    await expectError(ws.write('plain/g.txt', 'y', { executable: true }), 'NotSupportedError', 'ENOTSUP');
    await ws.write('tool', 'x', { executable: true });
    await expectError(ws.copy('tool', 'plain/tool'), 'NotSupportedError', 'ENOTSUP');
    expect(await ws.exists('plain/tool')).toBe(false);
    expect(await ws.exists('plain/g.txt')).toBe(false);
    const unrooted = compose([{ path: '/a', workspace: createWorkspace(memoryDriver()), access: 'read-write' }]);
    await expectError(unrooted.symlink('a', 'b/link'), 'ReadOnlyError', 'EROFS');
    await expectError(unrooted.symlink('x', 'link'), 'ReadOnlyError', 'EROFS');
  });

  it('composed snapshots, diffs and patches keep kinds across mounts, with composed paths', async () => {
    const { ws } = await layout();
    const start = await ws.snapshot();
    await ws.setExecutable('data/x.txt', true);
    await ws.symlink('x.txt', 'data/link');
    await ws.write('run.sh', 'echo\n', { executable: true });
    expect(await ws.diff(start)).toEqual([
      { path: 'data/link', status: 'added' },
      { path: 'data/x.txt', status: 'modified' },
      { path: 'run.sh', status: 'added' },
    ]);
    const patch = await ws.patch(start);
    expect(patch).toContain('diff --git a/data/x.txt b/data/x.txt\nold mode 100644\nnew mode 100755\n');
    expect(patch).toContain('diff --git a/data/link b/data/link\nnew file mode 120000\n');
    expect(patch).toContain('diff --git a/run.sh b/run.sh\nnew file mode 100755\n');
    expect(await (await ws.snapshotTree()).entry('data/x.txt')).toMatchObject({ kind: 'file', executable: true });
    await ws.restore(start);
    expect((await ws.stat('data/x.txt')).executable).toBe(false);
    expect(await ws.exists('data/link')).toBe(false);
  });
});
