import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError } from '../../src/testing/harness.js';
import { scratch, hostOf } from './support.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver, hostExec } from '../../src/backends/host/index.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('host workspace lifetime and change detection', () => {
  const { workspace, dir } = scratch();

  it('dispose removes the temp root and git dir it created, and nothing a caller gave', async () => {
    const owned = createWorkspace(hostDriver());
    await owned.write('a.txt', 'a');
    await owned.snapshot();
    await owned.dispose();
    expect(fs.existsSync(owned.root)).toBe(false);
    expect(fs.existsSync(hostOf(owned).gitDir)).toBe(false);
    await owned.dispose(); // idempotent

    const root = dir();
    const gitDir = join(dir('sessionfs-git-parent-'), 'not-yet');
    const given = createWorkspace(hostDriver({ root, gitDir }));
    await given.write('a.txt', 'a');
    await given.snapshot();
    await given[Symbol.asyncDispose]();
    expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a');
    expect(fs.existsSync(join(gitDir, 'objects'))).toBe(true);

    const onlyRoot = createWorkspace(hostDriver({ root }));
    await onlyRoot.dispose();
    expect(fs.existsSync(root)).toBe(true);
    expect(fs.existsSync(hostOf(onlyRoot).gitDir)).toBe(false);
  });

  it('creates a missing root, resolves it to its real path, and refuses a git dir inside the root', async () => {
    const base = dir();
    fs.mkdirSync(join(base, 'real'));
    fs.symlinkSync(join(base, 'real'), join(base, 'alias'));
    const ws = workspace({ root: join(base, 'alias', 'new', 'root') });
    expect(ws.root).toBe(join(base, 'real', 'new', 'root'));
    expect(fs.statSync(ws.root).isDirectory()).toBe(true);
    const error = await expectError(
      Promise.resolve().then(() => createWorkspace(hostDriver({ root: ws.root, gitDir: join(ws.root, '.snapshots') }))),
      'InvalidArgumentError',
      'EINVAL',
      { hostPaths: [base] },
    );
    expect(error.message).toMatch(/outside/);
    expect(fs.existsSync(join(ws.root, '.snapshots'))).toBe(false);
    // Through a link into the root, too.
    await expectError(
      Promise.resolve().then(() =>
        createWorkspace(hostDriver({ root: join(base, 'alias', 'new', 'root'), gitDir: join(base, 'real', 'new', 'root', 'g') })),
      ),
      'InvalidArgumentError',
      'EINVAL',
      { hostPaths: [base] },
    );
    await expectError(
      Promise.resolve().then(() => createWorkspace(hostDriver({ root: ws.root, gitDir: ws.root }))),
      'InvalidArgumentError',
      'EINVAL',
      { hostPaths: [base] },
    );
  });

  it('read-only: refuses restore and exec (ReadOnlyError), allows snapshot and diff', async () => {
    const root = dir();
    fs.writeFileSync(join(root, 'a.txt'), 'a');
    const ws = workspace({ root, readOnly: true });
    const snap = await ws.snapshot();
    expect(await ws.diff(snap)).toEqual([]);
    await expectError(ws.restore(snap), 'ReadOnlyError', 'EROFS', { hostPaths: [] });
    await expectError(hostExec(ws, 'touch', ['b.txt']), 'ReadOnlyError', 'EROFS', { hostPaths: [] });
    await expectError(ws.write('a.txt', 'b'), 'ReadOnlyError', 'EROFS', { hostPaths: [] });
    expect(fs.readdirSync(root)).toEqual(['a.txt']);
  });

  it('scan mode: cost follows change, and writes by other processes are found', async () => {
    const ws = workspace();
    for (let i = 0; i < 50; i += 1) await ws.write(`d${i % 5}/f${i}.txt`, `file ${i}`);
    await pause(100); // out of the racy window
    await ws.snapshot();
    expect(hostOf(ws).lastHashedCount).toBe(50);
    await pause(100);
    await ws.write('d1/f1.txt', 'protocol write');
    fs.writeFileSync(join(ws.root, 'd2/f2.txt'), 'external write');
    fs.writeFileSync(join(ws.root, 'd3/new.txt'), 'external new file');
    const snap = await ws.snapshot();
    expect(hostOf(ws).lastHashedCount).toBe(3);
    // Those three were hashed within a timestamp tick of their last change: re-hashed once more, then trusted.
    await pause(100);
    await ws.snapshot();
    expect(hostOf(ws).lastHashedCount).toBe(3);
    await ws.snapshot();
    expect(hostOf(ws).lastHashedCount).toBe(0);
    fs.writeFileSync(join(ws.root, 'd2/f2.txt'), 'again');
    expect(await ws.diff(snap)).toEqual([{ path: 'd2/f2.txt', status: 'modified' }]);
  });

  it('tracked mode: trusts its own writes without a walk, and sees others only through markChanged or exec', async () => {
    const ws = workspace({ changeDetection: 'tracked' });
    for (let i = 0; i < 20; i += 1) await ws.write(`f${i}.txt`, `file ${i}`);
    const base = await ws.snapshot();
    fs.writeFileSync(join(ws.root, 'f0.txt'), 'external, unannounced');
    await ws.write('f1.txt', 'protocol');
    await ws.snapshot();
    expect(hostOf(ws).lastHashedCount).toBe(1);
    expect((await ws.diff(base)).map((d) => d.path)).toEqual(['f1.txt']); // f0's external edit is not seen
    ws.markChanged(['/f0.txt']);
    expect((await ws.diff(base)).map((d) => d.path)).toEqual(['f0.txt', 'f1.txt']);
    fs.writeFileSync(join(ws.root, 'f2.txt'), 'another external edit');
    fs.mkdirSync(join(ws.root, 'ext'));
    fs.writeFileSync(join(ws.root, 'ext/made.txt'), 'external');
    ws.markChanged();
    expect((await ws.diff(base)).map((d) => d.path)).toEqual(['ext/made.txt', 'f0.txt', 'f1.txt', 'f2.txt']);
  });

  it('exec runs in the root through execa and makes a tracked workspace scan', async () => {
    const ws = workspace({ changeDetection: 'tracked' });
    await ws.write('a.txt', 'a');
    const base = await ws.snapshot();
    const result = await hostExec(ws, process.execPath, ['-e', "require('fs').writeFileSync('made-by-exec.txt', process.cwd())"]);
    expect(result.exitCode).toBe(0);
    expect(fs.readFileSync(join(ws.root, 'made-by-exec.txt'), 'utf8')).toBe(ws.root);
    expect(await ws.diff(base)).toEqual([{ path: 'made-by-exec.txt', status: 'added' }]);
    await ws.restore(base);
    expect(fs.existsSync(join(ws.root, 'made-by-exec.txt'))).toBe(false);
    // A failing command still marks the workspace for a scan.
    await expect(
      hostExec(ws, process.execPath, ['-e', "require('fs').writeFileSync('partial.txt', 'x'); process.exit(3)"]),
    ).rejects.toThrow();
    expect(await ws.diff(base)).toEqual([{ path: 'partial.txt', status: 'added' }]);
  });

  it('tracked mode stays exact across protocol mkdir, rename, copy and delete', async () => {
    const ws = workspace({ changeDetection: 'tracked' });
    await ws.write('src/a.ts', 'a');
    await ws.write('src/b.ts', 'b');
    const base = await ws.snapshot();
    await ws.rename('src', 'lib');
    await ws.copy('lib', 'copy', { recursive: true });
    await ws.mkdir('empty');
    await ws.delete('copy/b.ts');
    const after = await ws.snapshot();
    expect(await ws.diff(base, after)).toEqual([
      { path: 'copy/a.ts', status: 'added' },
      { path: 'lib/a.ts', status: 'added' },
      { path: 'lib/b.ts', status: 'added' },
      { path: 'src/a.ts', status: 'deleted' },
      { path: 'src/b.ts', status: 'deleted' },
    ]);
    await ws.restore(base);
    expect((await ws.list()).map((e) => e.name)).toEqual(['src']);
    await ws.restore(after);
    expect((await ws.list()).map((e) => e.name)).toEqual(['copy', 'empty', 'lib']);
  });
});
