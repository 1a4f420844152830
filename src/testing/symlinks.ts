import { readFile, readdir, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { contentsOf, expectError, tempDirs, workspaces, type ComplianceHarness } from './harness.js';

/** For backends with symlinks: links inside the root behave as links, links that leave it are walls. */
export function symlinkRules(harness: ComplianceHarness): void {
  const plant =
    harness.symlink ??
    (harness.fileKinds === false ? undefined : (ws: SnapshotableWorkspace, link: string, target: string) => ws.symlink(target, link));
  if (plant === undefined) return;

  describe('symlinks', () => {
    const create = workspaces(harness);
    const tempDir = tempDirs({ prefix: 'sessionfs-outside-' });
    let outside: string;

    beforeEach(async () => {
      outside = tempDir();
      await writeFile(join(outside, 'secret.txt'), 'secret\n');
      await mkdir(join(outside, 'dir'));
      await writeFile(join(outside, 'dir', 'inner.txt'), 'inner secret\n');
    });

    it('follows a link to a file inside the root for reads, stat, glob and grep, and reports isSymlink', async () => {
      const ws = await create();
      await ws.write('real/target.txt', 'hello link\n');
      await plant(ws, 'alias.txt', 'real/target.txt');
      expect((await ws.read('alias.txt')).content).toBe('hello link');
      expect(await ws.stat('alias.txt')).toMatchObject({
        path: 'alias.txt',
        isSymlink: true,
        isFile: true,
        isDirectory: false,
        sizeBytes: 11,
      });
      expect((await ws.list('/')).find((e) => e.name === 'alias.txt')).toEqual({
        name: 'alias.txt',
        path: 'alias.txt',
        isFile: true,
        isDirectory: false,
        isSymlink: true,
      });
      expect((await ws.glob('*.txt')).map((m) => m.path)).toEqual(['alias.txt']);
      expect((await ws.grep('hello')).map((m) => m.path)).toEqual(['alias.txt', 'real/target.txt']);
      expect(await ws.exists('alias.txt')).toBe(true);
    });

    it('refuses to read, stat or write through a link that leaves the root, absolute or relative', async () => {
      const ws = await create();
      await plant(ws, 'abs.txt', join(outside, 'secret.txt'));
      await plant(ws, 'deep/rel.txt', `${'../'.repeat(40)}${outside.slice(1)}/secret.txt`);
      for (const link of ['abs.txt', 'deep/rel.txt']) {
        await expectError(ws.read(link), 'PathEscapeError', 'EACCES');
        await expectError(ws.readBytes(link), 'PathEscapeError', 'EACCES');
        await expectError(ws.stat(link), 'PathEscapeError', 'EACCES');
        await expectError(ws.write(link, 'overwritten'), 'PathEscapeError', 'EACCES');
        await expectError(ws.write(link, 'appended', { mode: 'append' }), 'PathEscapeError', 'EACCES');
        expect(await ws.exists(link)).toBe(false);
      }
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    });

    it('refuses paths through a directory link that leaves the root, and creates nothing outside', async () => {
      const ws = await create();
      await plant(ws, 'escape', join(outside, 'dir'));
      await expectError(ws.read('escape/inner.txt'), 'PathEscapeError', 'EACCES');
      await expectError(ws.list('escape'), 'PathEscapeError', 'EACCES');
      await expectError(ws.write('escape/new.txt', 'x'), 'PathEscapeError', 'EACCES');
      await expectError(ws.mkdir('escape/newdir'), 'PathEscapeError', 'EACCES');
      await expectError(ws.delete('escape/inner.txt'), 'PathEscapeError', 'EACCES');
      await expectError(ws.rename('escape/inner.txt', 'stolen.txt'), 'PathEscapeError', 'EACCES');
      await expectError(ws.copy('escape/inner.txt', 'stolen.txt'), 'PathEscapeError', 'EACCES');
      expect(await readdir(join(outside, 'dir'))).toEqual(['inner.txt']);
      expect(await ws.exists('stolen.txt')).toBe(false);
    });

    it('lists an escaping link by name only and never walks or searches through it', async () => {
      const ws = await create();
      await ws.write('inside.txt', 'secret inside\n');
      await plant(ws, 'file-out', join(outside, 'secret.txt'));
      await plant(ws, 'dir-out', join(outside, 'dir'));
      const listing = await ws.list('/');
      expect(listing.find((e) => e.name === 'file-out')).toEqual({
        name: 'file-out',
        path: 'file-out',
        isFile: false,
        isDirectory: false,
        isSymlink: true,
      });
      expect(listing.find((e) => e.name === 'dir-out')).toEqual({
        name: 'dir-out',
        path: 'dir-out',
        isFile: false,
        isDirectory: false,
        isSymlink: true,
      });
      expect((await ws.glob('**', { dot: true })).map((m) => m.path)).toEqual(['inside.txt']);
      expect((await ws.grep('secret')).map((m) => m.path)).toEqual(['inside.txt']);
    });

    it('never descends through a directory link, even one that stays inside the root', async () => {
      const ws = await create();
      await ws.write('real/a.txt', 'a');
      await plant(ws, 'loop', '.');
      await plant(ws, 'alias-dir', 'real');
      expect((await ws.glob('**')).map((m) => m.path)).toEqual(['real/a.txt']);
      expect((await ws.grep('a')).map((m) => m.path)).toEqual(['real/a.txt']);
      expect((await ws.read('alias-dir/a.txt')).content).toBe('a');
    });

    it('mkdir treats a link to a directory inside the root as the directory, and refuses one that leaves it', async () => {
      const ws = await create();
      await ws.mkdir('real');
      await plant(ws, 'alias', 'real');
      await plant(ws, 'out', join(outside, 'dir'));
      await ws.mkdir('alias');
      await ws.mkdir('alias/sub');
      expect((await ws.stat('real/sub')).isDirectory).toBe(true);
      await expectError(ws.mkdir('alias', { existOk: false }), 'FileExistsError', 'EEXIST');
      await expectError(ws.mkdir('out'), 'PathEscapeError', 'EACCES');
      expect(await readdir(join(outside, 'dir'))).toEqual(['inner.txt']);
    });

    it('deletes, moves and copies a link as a link, never its target', async () => {
      const ws = await create();
      await ws.write('target.txt', 'target');
      await plant(ws, 'l1', 'target.txt');
      await plant(ws, 'out', join(outside, 'secret.txt'));
      await ws.rename('l1', 'moved/l1');
      expect((await ws.stat('moved/l1')).isSymlink).toBe(true);
      await ws.copy('out', 'out-copy');
      expect((await ws.list('/')).find((e) => e.name === 'out-copy')?.isSymlink).toBe(true);
      await ws.delete('out');
      await ws.delete('out-copy');
      await ws.delete('moved/l1');
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
      expect(await contentsOf(ws)).toEqual({ 'moved/': '', 'target.txt': 'target' });
    });

    it('snapshots hold links as links, and restore replaces a path that became a link instead of following it', async () => {
      const ws = await create();
      await ws.write('file.txt', 'original');
      await ws.write('dir/inner.txt', 'inner');
      await plant(ws, 'link', 'file.txt');
      const snapshot = await ws.snapshot();
      await ws.delete('link');
      await ws.delete('file.txt');
      await plant(ws, 'file.txt', join(outside, 'secret.txt'));
      await ws.delete('dir', { recursive: true });
      await plant(ws, 'dir', join(outside, 'dir'));
      expect((await ws.diff(snapshot)).map((d) => `${d.status} ${d.path}`)).toEqual(
        ['deleted dir/inner.txt', 'added dir', 'modified file.txt', 'deleted link'].sort((a, b) =>
          a.split(' ')[1]! < b.split(' ')[1]! ? -1 : 1,
        ),
      );
      await ws.restore(snapshot);
      expect((await ws.read('file.txt')).content).toBe('original');
      expect((await ws.stat('file.txt')).isSymlink).toBe(false);
      expect((await ws.stat('link')).isSymlink).toBe(true);
      expect((await ws.read('dir/inner.txt')).content).toBe('inner');
      expect((await ws.stat('dir')).isSymlink).toBe(false);
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
      expect(await readdir(join(outside, 'dir'))).toEqual(['inner.txt']);
    });
  });
}
