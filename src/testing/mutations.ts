import { describe, expect, it } from 'vitest';
import { contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

export function mutations(harness: ComplianceHarness): void {
  describe('mkdir', () => {
    const create = workspaces(harness);

    it('creates empty directories that list, stat and glob as directories', async () => {
      const ws = await create();
      await ws.mkdir('a/b/c');
      expect(await contentsOf(ws)).toEqual({ 'a/': '', 'a/b/': '', 'a/b/c/': '' });
      expect((await ws.stat('a/b/c')).isDirectory).toBe(true);
      expect(await ws.glob('**')).toEqual([]);
    });

    it('is idempotent by default and refuses an existing directory with existOk: false', async () => {
      const ws = await create();
      await ws.mkdir('d');
      await ws.write('d/keep.txt', 'k');
      await ws.mkdir('d');
      await ws.mkdir('/');
      await expectError(ws.mkdir('d', { existOk: false }), 'FileExistsError', 'EEXIST');
      await expectError(ws.mkdir('/', { existOk: false }), 'FileExistsError', 'EEXIST');
      expect((await ws.read('d/keep.txt')).content).toBe('k');
    });

    it('refuses missing parents with parents: false', async () => {
      const ws = await create();
      await expectError(ws.mkdir('x/y', { parents: false }), 'FileNotFoundError', 'ENOENT');
      expect(await ws.exists('x')).toBe(false);
      await ws.mkdir('x', { parents: false });
      await ws.mkdir('x/y', { parents: false });
      expect((await ws.stat('x/y')).isDirectory).toBe(true);
    });
  });

  describe('delete', () => {
    const create = workspaces(harness);

    it('deletes files and empty directories', async () => {
      const ws = await create();
      await ws.write('f.txt', 'x');
      await ws.mkdir('empty');
      await ws.delete('f.txt');
      await ws.delete('/empty');
      expect(await ws.list('/')).toEqual([]);
    });

    it('refuses a non-empty directory without recursive and removes nothing', async () => {
      const ws = await create();
      await ws.write('d/a.txt', 'a');
      await ws.write('d/sub/b.txt', 'b');
      await expectError(ws.delete('d'), 'DirectoryNotEmptyError', 'ENOTEMPTY');
      expect(await contentsOf(ws)).toEqual({ 'd/': '', 'd/a.txt': 'a', 'd/sub/': '', 'd/sub/b.txt': 'b' });
      await ws.delete('d', { recursive: true });
      expect(await ws.list('/')).toEqual([]);
    });

    it('refuses the root with InvalidArgumentError and removes nothing', async () => {
      const ws = await create();
      await ws.write('a.txt', 'a');
      for (const root of ['/', '', '.', 'a/..']) await expectError(ws.delete(root, { recursive: true }), 'InvalidArgumentError', 'EINVAL');
      expect(await contentsOf(ws)).toEqual({ 'a.txt': 'a' });
    });

    it('raises ENOENT for a missing path', async () => {
      const ws = await create();
      await expectError(ws.delete('ghost'), 'FileNotFoundError', 'ENOENT');
    });
  });

  describe('rename', () => {
    const create = workspaces(harness);

    it('moves files and whole directories, creating missing parents of the target', async () => {
      const ws = await create();
      await ws.write('a.txt', 'a');
      await ws.write('dir/x.txt', 'x');
      await ws.mkdir('dir/empty');
      await ws.rename('a.txt', 'moved/deep/a.txt');
      await ws.rename('dir', 'renamed');
      expect(await contentsOf(ws)).toEqual({
        'moved/': '',
        'moved/deep/': '',
        'moved/deep/a.txt': 'a',
        'renamed/': '',
        'renamed/empty/': '',
        'renamed/x.txt': 'x',
      });
    });

    it('refuses an existing target unless overwrite, and then replaces a target of the same kind', async () => {
      const ws = await create();
      await ws.write('a.txt', 'a');
      await ws.write('b.txt', 'b');
      await expectError(ws.rename('a.txt', 'b.txt'), 'FileExistsError', 'EEXIST');
      expect(await contentsOf(ws)).toEqual({ 'a.txt': 'a', 'b.txt': 'b' });
      await ws.rename('a.txt', 'b.txt', { overwrite: true });
      expect(await contentsOf(ws)).toEqual({ 'b.txt': 'a' });
      await ws.write('d1/one.txt', '1');
      await ws.write('d2/two.txt', '2');
      await ws.rename('d1', 'd2', { overwrite: true });
      expect(await contentsOf(ws)).toEqual({ 'b.txt': 'a', 'd2/': '', 'd2/one.txt': '1' });
    });

    it('refuses to replace a directory with a file or a file with a directory', async () => {
      const ws = await create();
      await ws.write('f.txt', 'f');
      await ws.mkdir('d');
      await expectError(ws.rename('f.txt', 'd', { overwrite: true }), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.rename('d', 'f.txt', { overwrite: true }), 'NotADirectoryError', 'ENOTDIR');
      expect(await contentsOf(ws)).toEqual({ 'd/': '', 'f.txt': 'f' });
    });

    it('refuses moving a directory into itself and moving the root', async () => {
      const ws = await create();
      await ws.write('d/a.txt', 'a');
      await expectError(ws.rename('d', 'd/sub'), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.rename('/', 'x'), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.rename('d', '/'), 'InvalidArgumentError', 'EINVAL');
      expect(await contentsOf(ws)).toEqual({ 'd/': '', 'd/a.txt': 'a' });
    });

    it('raises ENOENT for a missing source, ENOTDIR under a file, and treats a path onto itself as done', async () => {
      const ws = await create();
      await ws.write('f.txt', 'f');
      await expectError(ws.rename('ghost', 'x'), 'FileNotFoundError', 'ENOENT');
      await expectError(ws.rename('f.txt', 'f.txt/inner'), 'NotADirectoryError', 'ENOTDIR');
      await ws.rename('f.txt', './f.txt');
      expect(await contentsOf(ws)).toEqual({ 'f.txt': 'f' });
    });
  });

  describe('copy', () => {
    const create = workspaces(harness);

    it('copies a file, and the copy is independent of the original', async () => {
      const ws = await create();
      await ws.write('a.txt', 'a');
      await ws.copy('a.txt', 'copies/b.txt');
      await ws.write('copies/b.txt', 'changed');
      expect(await contentsOf(ws)).toEqual({ 'a.txt': 'a', 'copies/': '', 'copies/b.txt': 'changed' });
    });

    it('needs recursive for a directory, then copies it whole including empty directories', async () => {
      const ws = await create();
      await ws.write('src/a.txt', 'a');
      await ws.write('src/lib/b.txt', 'b');
      await ws.mkdir('src/empty');
      await expectError(ws.copy('src', 'dst'), 'IsADirectoryError', 'EISDIR');
      expect(await ws.exists('dst')).toBe(false);
      await ws.copy('src', 'dst', { recursive: true });
      await ws.write('dst/lib/b.txt', 'changed');
      const all = await contentsOf(ws);
      expect(all).toMatchObject({ 'src/lib/b.txt': 'b', 'dst/lib/b.txt': 'changed', 'dst/a.txt': 'a', 'dst/empty/': '' });
    });

    it('refuses an existing target unless overwrite, a copy into itself, and the root', async () => {
      const ws = await create();
      await ws.write('a.txt', 'a');
      await ws.write('b.txt', 'b');
      await ws.write('d/x.txt', 'x');
      await expectError(ws.copy('a.txt', 'b.txt'), 'FileExistsError', 'EEXIST');
      await ws.copy('a.txt', 'b.txt', { overwrite: true });
      expect((await ws.read('b.txt')).content).toBe('a');
      await expectError(ws.copy('d', 'd/inner', { recursive: true }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.copy('/', 'x', { recursive: true }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.copy('a.txt', 'a.txt', { overwrite: true }), 'FileExistsError', 'EEXIST');
      await expectError(ws.copy('ghost', 'g2'), 'FileNotFoundError', 'ENOENT');
      await expectError(ws.copy('a.txt', 'd', { overwrite: true }), 'IsADirectoryError', 'EISDIR');
      expect(await contentsOf(ws)).toEqual({ 'a.txt': 'a', 'b.txt': 'a', 'd/': '', 'd/x.txt': 'x' });
    });
  });
}
