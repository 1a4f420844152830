import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ManagedWorkspace, createWorkspace, overlayDriver } from '../../src/index.js';
import { expectError, tempDirs } from '../../src/testing/harness.js';

/** File kinds where the overlay's two layers meet: lower files' bits, copy-up, lower links as data. */
describe('overlay file kinds', () => {
  let lower: string;
  let outside: string;
  const tempDir = tempDirs({ prefix: 'sessionfs-overlay-kinds-' });
  const opened: ManagedWorkspace[] = [];
  const open = (): ManagedWorkspace => {
    const workspace = createWorkspace(overlayDriver({ lower, allowedHostRoots: [lower] }));
    opened.push(workspace);
    return workspace;
  };

  beforeEach(async () => {
    const base = tempDir();
    lower = join(base, 'lower');
    outside = join(base, 'outside');
    await fs.mkdir(join(lower, 'src'), { recursive: true });
    await fs.mkdir(outside);
    await fs.writeFile(join(outside, 'secret.txt'), 'secret\n');
    await fs.writeFile(join(lower, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await fs.writeFile(join(lower, 'src', 'main.ts'), 'export const main = 1;\n', { mode: 0o644 });
    await fs.symlink('src/main.ts', join(lower, 'main-link'));
    await fs.symlink(join(outside, 'secret.txt'), join(lower, 'abs-out'));
  });
  afterEach(async () => {
    for (const workspace of opened.splice(0)) await workspace.dispose();
  });

  it('stat() reports the executable bit of lower files', async () => {
    const ws = open();
    expect((await ws.stat('run.sh')).executable).toBe(true);
    expect((await ws.stat('src/main.ts')).executable).toBe(false);
    expect((await ws.stat('src')).executable).toBe(false);
  });

  it('setExecutable copies a lower file up with the bit changed, leaving the disk alone; a patch shows the mode change', async () => {
    const ws = open();
    const start = await ws.snapshot();
    await ws.setExecutable('src/main.ts', true);
    await ws.setExecutable('run.sh', false);
    expect(await ws.stat('src/main.ts')).toMatchObject({ executable: true, sizeBytes: 23 });
    expect((await ws.read('src/main.ts')).content).toBe('export const main = 1;');
    expect((await ws.stat('run.sh')).executable).toBe(false);
    expect((await fs.stat(join(lower, 'src', 'main.ts'))).mode & 0o777).toBe(0o644);
    expect((await fs.stat(join(lower, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect(await ws.diff(start)).toEqual([
      { path: 'run.sh', status: 'modified' },
      { path: 'src/main.ts', status: 'modified' },
    ]);
    expect(await ws.patch(start)).toBe(
      'diff --git a/run.sh b/run.sh\nold mode 100755\nnew mode 100644\n' +
        'diff --git a/src/main.ts b/src/main.ts\nold mode 100644\nnew mode 100755\n',
    );
    await ws.restore(start);
    expect((await ws.stat('src/main.ts')).executable).toBe(false);
    expect((await ws.stat('run.sh')).executable).toBe(true);
  });

  it('setExecutable to the bit a lower file already has changes nothing', async () => {
    const ws = open();
    const start = await ws.snapshot();
    await ws.setExecutable('run.sh', true);
    await ws.setExecutable('src/main.ts', false);
    expect(await ws.diff(start)).toEqual([]);
  });

  it('setExecutable through a lower link changes its target; write { executable } over a lower file sets the bit', async () => {
    const ws = open();
    await ws.setExecutable('main-link', true);
    expect((await ws.stat('src/main.ts')).executable).toBe(true);
    expect(await ws.readlink('main-link')).toBe('src/main.ts');
    await ws.write('run.sh', 'echo bye\n', { executable: false });
    expect((await ws.stat('run.sh')).executable).toBe(false);
  });

  it('readlink and stat().linkTarget give a lower link’s target text, even one that leaves the root', async () => {
    const ws = open();
    expect(await ws.readlink('main-link')).toBe('src/main.ts');
    expect(await ws.stat('main-link')).toMatchObject({ isSymlink: true, isFile: true, linkTarget: 'src/main.ts' });
    expect(await ws.readlink('abs-out')).toBe(join(outside, 'secret.txt'));
    await expectError(ws.read('abs-out'), 'PathEscapeError', 'EACCES');
    const tree = await ws.snapshotTree();
    const link = await tree.entry('main-link');
    expect(link?.kind).toBe('symlink');
    if (link?.kind === 'symlink') expect(Buffer.from(await link.bytes()).toString()).toBe('src/main.ts');
  });

  it('a link the session makes is data: its absolute target is never resolved against the host, even inside the lower root', async () => {
    await fs.symlink(join(lower, 'run.sh'), join(lower, 'abs-in'));
    const ws = open();
    // A lower link keeps the host's rule: an absolute target inside the lower root is followed.
    expect((await ws.read('abs-in')).content).toBe('#!/bin/sh\necho hi');
    await ws.symlink(join(lower, 'run.sh'), 'made-abs');
    expect(await ws.readlink('made-abs')).toBe(join(lower, 'run.sh'));
    await expectError(ws.read('made-abs'), 'PathEscapeError', 'EACCES');
    await expectError(ws.write('made-abs', 'x'), 'PathEscapeError', 'EACCES');
    expect(await ws.exists('made-abs')).toBe(false);
  });

  it('a link made over a deleted lower file replaces it, and a restore brings the file back', async () => {
    const ws = open();
    const start = await ws.snapshot();
    await ws.delete('run.sh');
    await ws.symlink('src/main.ts', 'run.sh');
    expect((await ws.read('run.sh')).content).toBe('export const main = 1;');
    expect(await ws.diff(start)).toEqual([{ path: 'run.sh', status: 'modified' }]);
    await ws.restore(start);
    expect(await ws.stat('run.sh')).toMatchObject({ isSymlink: false, executable: true });
  });
});
