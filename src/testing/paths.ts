import { describe, expect, it } from 'vitest';
import { bytes, contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

export function pathRules(harness: ComplianceHarness): void {
  describe('paths', () => {
    const create = workspaces(harness);

    it('treats a leading slash as the workspace root and reports paths without it', async () => {
      const ws = await create();
      const written = await ws.write('/src/a.ts', 'x');
      expect(written.path).toBe('src/a.ts');
      expect((await ws.read('src/a.ts')).path).toBe('src/a.ts');
      expect((await ws.read('/src/a.ts')).content).toBe('x');
      expect((await ws.stat('/src/a.ts')).path).toBe('src/a.ts');
    });

    it('accepts "", "." and "/" as the root and reports it as "/"', async () => {
      const ws = await create();
      await ws.write('a.txt', 'a');
      for (const root of ['', '.', '/', '//', './']) {
        expect((await ws.list(root)).map((e) => e.path)).toEqual(['a.txt']);
        const stat = await ws.stat(root);
        expect(stat).toMatchObject({ path: '/', isDirectory: true, isFile: false });
      }
      expect(await ws.exists('/')).toBe(true);
    });

    it('collapses duplicate slashes and "." segments and resolves ".." lexically', async () => {
      const ws = await create();
      expect((await ws.write('src//./lib/../a.ts', 'x')).path).toBe('src/a.ts');
      expect((await ws.read('./src/./a.ts')).content).toBe('x');
      expect((await ws.list('src/')).map((e) => e.path)).toEqual(['src/a.ts']);
      expect(await ws.exists('src/lib')).toBe(false);
    });

    it('refuses a ".." that climbs above the root with PathEscapeError on every operation, never clamping', async () => {
      const ws = await create();
      await ws.write('a.txt', 'inside');
      const escapes = ['..', '../a.txt', 'src/../../a.txt', '/../a.txt', './../etc/passwd'];
      for (const path of escapes) {
        await expectError(ws.read(path), 'PathEscapeError', 'EACCES');
        await expectError(ws.readBytes(path), 'PathEscapeError', 'EACCES');
        await expectError(ws.write(path, 'x'), 'PathEscapeError', 'EACCES');
        await expectError(ws.stat(path), 'PathEscapeError', 'EACCES');
        await expectError(ws.list(path), 'PathEscapeError', 'EACCES');
        await expectError(ws.mkdir(path), 'PathEscapeError', 'EACCES');
        await expectError(ws.delete(path, { recursive: true }), 'PathEscapeError', 'EACCES');
        await expectError(ws.rename('a.txt', path), 'PathEscapeError', 'EACCES');
        await expectError(ws.copy(path, 'b.txt'), 'PathEscapeError', 'EACCES');
        await expectError(ws.glob('*', { path }), 'PathEscapeError', 'EACCES');
        await expectError(ws.grep('x', { path }), 'PathEscapeError', 'EACCES');
        expect(await ws.exists(path)).toBe(false);
      }
      expect(await contentsOf(ws)).toEqual({ 'a.txt': 'inside' });
    });

    it('rejects control characters and backslashes with InvalidPathError before any I/O', async () => {
      const ws = await create();
      const bad = ['a\u0000b', 'tab\there', 'new\nline', 'cr\r', 'del\u007f', 'win\\path', '..\\..\\etc', 'c1\u0085'];
      for (const path of bad) {
        await expectError(ws.write(path, 'x'), 'InvalidPathError', 'EINVAL');
        await expectError(ws.writeBytes(path, bytes('x')), 'InvalidPathError', 'EINVAL');
        await expectError(ws.mkdir(path), 'InvalidPathError', 'EINVAL');
        await expectError(ws.read(path), 'InvalidPathError', 'EINVAL');
        await expectError(ws.stat(path), 'InvalidPathError', 'EINVAL');
        await expectError(ws.exists(path), 'InvalidPathError', 'EINVAL');
      }
      expect(await ws.list('/')).toEqual([]);
    });

    it('trims nothing: names with spaces are distinct names', async () => {
      const ws = await create();
      await ws.write(' a.txt', 'lead');
      await ws.write('a.txt ', 'trail');
      await ws.write('a.txt', 'plain');
      expect((await ws.list('/')).map((e) => e.name)).toEqual([' a.txt', 'a.txt', 'a.txt ']);
      expect((await ws.read(' a.txt')).content).toBe('lead');
    });

    it('allows any other UTF-8 name', async () => {
      const ws = await create();
      await ws.write('données/naïve résumé.txt', 'ok');
      await ws.write('日本/テスト.md', 'はい');
      await ws.write('emoji/🚀.txt', 'launch');
      expect((await ws.glob('**/*')).map((m) => m.path)).toEqual(['données/naïve résumé.txt', 'emoji/🚀.txt', '日本/テスト.md']);
      expect((await ws.read('日本/テスト.md')).content).toBe('はい');
    });

    it('rejects non-string paths with InvalidArgumentError', async () => {
      const ws = await create();
      await expectError(ws.read(42 as unknown as string), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.write(undefined as unknown as string, 'x'), 'InvalidArgumentError', 'EINVAL');
    });

    it('errors carry the normalised path', async () => {
      const ws = await create();
      const error = await expectError(ws.read('/missing//dir/./x.txt'), 'FileNotFoundError', 'ENOENT');
      expect(error.path).toBe('missing/dir/x.txt');
      const rootError = await expectError(ws.delete('/'), 'InvalidArgumentError', 'EINVAL');
      expect(rootError.path).toBe('/');
    });
  });

  describe('creation limits', () => {
    const create = workspaces(harness);

    it('allows 16 segments and refuses 17 by default, for writes, mkdir, rename and copy targets', async () => {
      const ws = await create();
      const sixteen = Array.from({ length: 16 }, (_, i) => `d${i}`).join('/');
      await ws.write(sixteen, 'deep');
      await expectError(ws.write(`${sixteen}/x`, 'x'), 'LimitExceededError', 'EFBIG');
      await expectError(ws.mkdir(`${sixteen}/x`), 'LimitExceededError', 'EFBIG');
      await ws.write('f.txt', 'f');
      await expectError(ws.rename('f.txt', `${sixteen}/x`), 'LimitExceededError', 'EFBIG');
      await expectError(ws.copy('f.txt', `${sixteen}/x`), 'LimitExceededError', 'EFBIG');
      expect(await ws.exists('f.txt')).toBe(true);
    });

    it('counts the deepest descendant when a directory is moved or copied', async () => {
      const ws = await create({ limits: { maxPathDepth: 4 } });
      await ws.write('a/b/c/d', 'x');
      await expectError(ws.rename('a', 'z/a'), 'LimitExceededError', 'EFBIG');
      await expectError(ws.copy('a', 'z/a', { recursive: true }), 'LimitExceededError', 'EFBIG');
      await ws.copy('a/b', 'z/b', { recursive: true });
      expect((await ws.read('z/b/c/d')).content).toBe('x');
    });

    it('measures segment length in code points: 80 allowed, 81 refused', async () => {
      const ws = await create();
      await ws.write('a'.repeat(80), 'ok');
      // 80 code points of a two-byte character (160 UTF-8 bytes, within any disk's 255-byte name limit).
      await ws.write('é'.repeat(80), 'ok');
      await expectError(ws.write('é'.repeat(81), 'x'), 'LimitExceededError', 'EFBIG');
      await expectError(ws.write('a'.repeat(81), 'x'), 'LimitExceededError', 'EFBIG');
      await expectError(ws.mkdir(`dir/${'é'.repeat(81)}`), 'LimitExceededError', 'EFBIG');
      expect(await ws.exists('dir')).toBe(false);
    });

    it('takes limits per workspace', async () => {
      const ws = await create({ limits: { maxPathDepth: 2, maxSegmentLength: 5, maxWriteBytes: 10 } });
      expect(ws.limits).toMatchObject({ maxPathDepth: 2, maxSegmentLength: 5, maxWriteBytes: 10 });
      await ws.write('ab/cd', '0123456789');
      await expectError(ws.write('ab/cd/ef', 'x'), 'LimitExceededError', 'EFBIG');
      await expectError(ws.write('abcdef', 'x'), 'LimitExceededError', 'EFBIG');
      await expectError(ws.write('ab/cd', '01234567890'), 'LimitExceededError', 'EFBIG');
      await expectError(ws.writeBytes('ab/x', new Uint8Array(11)), 'LimitExceededError', 'EFBIG');
      expect((await ws.read('ab/cd')).content).toBe('0123456789');
      expect(await ws.exists('ab/x')).toBe(false);
    });

    it('refuses writes over 32 MiB by default and writes nothing', async () => {
      const ws = await create();
      expect(ws.limits.maxWriteBytes).toBe(32 * 1024 * 1024);
      await expectError(ws.writeBytes('big.bin', new Uint8Array(32 * 1024 * 1024 + 1)), 'LimitExceededError', 'EFBIG');
      expect(await ws.exists('big.bin')).toBe(false);
    });

    it('rejects nonsensical limits', async () => {
      await expect(harness.create({ limits: { maxPathDepth: 0 } })).rejects.toMatchObject({ code: 'EINVAL' });
    });
  });
}
