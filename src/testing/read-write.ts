import { describe, expect, it } from 'vitest';
import { bytes, contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

export function readAndWrite(harness: ComplianceHarness): void {
  describe('read', () => {
    const create = workspaces(harness);

    it('counts lines without the empty remainder after a final newline', async () => {
      const ws = await create();
      const cases: [string, number, string][] = [
        ['a\nb\n', 2, 'a\nb'],
        ['a\nb', 2, 'a\nb'],
        ['', 0, ''],
        ['\n', 1, ''],
        ['only', 1, 'only'],
        ['a\n\n', 2, 'a\n'],
      ];
      for (const [text, totalLines, content] of cases) {
        await ws.write('f.txt', text);
        const result = await ws.read('f.txt');
        expect({ text, totalLines: result.totalLines, content: result.content, truncated: result.truncated }).toEqual({
          text,
          totalLines,
          content,
          truncated: false,
        });
      }
    });

    it('keeps \\r and splits on \\n only', async () => {
      const ws = await create();
      await ws.write('crlf.txt', 'a\r\nb\r\n');
      const result = await ws.read('crlf.txt');
      expect(result).toMatchObject({ content: 'a\r\nb\r', totalLines: 2 });
    });

    it('returns a window of lines with offset, limit and truncated', async () => {
      const ws = await create();
      await ws.write('lines.txt', Array.from({ length: 10 }, (_, i) => `line ${i}`).join('\n') + '\n');
      expect(await ws.read('lines.txt', { offset: 2, limit: 3 })).toEqual({
        path: 'lines.txt',
        content: 'line 2\nline 3\nline 4',
        totalLines: 10,
        offset: 2,
        limit: 3,
        truncated: true,
      });
      expect(await ws.read('lines.txt', { offset: 7, limit: 5 })).toMatchObject({
        content: 'line 7\nline 8\nline 9',
        limit: 3,
        truncated: false,
      });
      expect(await ws.read('lines.txt', { offset: 0, limit: -1 })).toMatchObject({ limit: 10, truncated: false });
      expect(await ws.read('lines.txt', { offset: 0, limit: 0 })).toMatchObject({ content: '', limit: 0, truncated: true });
    });

    it('returns empty content, not an error, for an offset past the end', async () => {
      const ws = await create();
      await ws.write('short.txt', 'a\nb\n');
      expect(await ws.read('short.txt', { offset: 10 })).toEqual({
        path: 'short.txt',
        content: '',
        totalLines: 2,
        offset: 10,
        limit: 0,
        truncated: false,
      });
    });

    it('returns 2000 lines by default', async () => {
      const ws = await create();
      await ws.write('long.txt', Array.from({ length: 2500 }, (_, i) => String(i)).join('\n'));
      const result = await ws.read('long.txt');
      expect(result).toMatchObject({ totalLines: 2500, limit: 2000, truncated: true, offset: 0 });
      expect(result.content.split('\n').at(-1)).toBe('1999');
    });

    it('raises InvalidContentError for content that is not UTF-8', async () => {
      const ws = await create();
      await ws.writeBytes('bin.dat', new Uint8Array([0x66, 0xff, 0xfe, 0x00]));
      await expectError(ws.read('bin.dat'), 'InvalidContentError', 'EILSEQ');
    });

    it('keeps a byte-order mark and multi-byte text intact', async () => {
      const ws = await create();
      await ws.writeBytes('bom.txt', new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]));
      expect((await ws.read('bom.txt')).content).toBe('\ufeffhi');
      await ws.write('u.txt', 'ünïcödé 🚀\n');
      expect((await ws.read('u.txt')).content).toBe('ünïcödé 🚀');
    });

    it('raises FileNotFoundError, IsADirectoryError and NotADirectoryError as a disk would', async () => {
      const ws = await create();
      await ws.write('file.txt', 'x');
      await ws.mkdir('dir');
      await expectError(ws.read('missing.txt'), 'FileNotFoundError', 'ENOENT');
      await expectError(ws.read('dir'), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.read('/'), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.read('file.txt/inner'), 'NotADirectoryError', 'ENOTDIR');
    });

    it('rejects negative or fractional windows with InvalidArgumentError', async () => {
      const ws = await create();
      await ws.write('f.txt', 'x');
      await expectError(ws.read('f.txt', { offset: -1 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.read('f.txt', { limit: -2 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.read('f.txt', { offset: 1.5 }), 'InvalidArgumentError', 'EINVAL');
    });
  });

  describe('readBytes', () => {
    const create = workspaces(harness);

    it('round-trips every byte value', async () => {
      const ws = await create();
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      await ws.writeBytes('all.bin', all);
      const result = await ws.readBytes('all.bin');
      expect(result).toMatchObject({ path: 'all.bin', sizeBytes: 256, offset: 0, limit: 256, truncated: false });
      expect([...result.content]).toEqual([...all]);
    });

    it('reads a byte range and reports truncation against the whole file', async () => {
      const ws = await create();
      await ws.write('abc.txt', 'abcdefghij');
      const middle = await ws.readBytes('abc.txt', { offset: 2, limit: 3 });
      expect(Buffer.from(middle.content).toString()).toBe('cde');
      expect(middle).toMatchObject({ sizeBytes: 10, offset: 2, limit: 3, truncated: true });
      const tail = await ws.readBytes('abc.txt', { offset: 8 });
      expect(Buffer.from(tail.content).toString()).toBe('ij');
      expect(tail).toMatchObject({ limit: 2, truncated: false });
      const past = await ws.readBytes('abc.txt', { offset: 50, limit: 5 });
      expect(past).toMatchObject({ limit: 0, truncated: false, sizeBytes: 10 });
      expect(past.content.byteLength).toBe(0);
    });

    it('rejects a negative offset or limit', async () => {
      const ws = await create();
      await ws.write('f', 'x');
      await expectError(ws.readBytes('f', { offset: -1 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.readBytes('f', { limit: -1 }), 'InvalidArgumentError', 'EINVAL');
    });

    it('hands out copies: mutating a result or the written buffer changes nothing stored', async () => {
      const ws = await create();
      const source = bytes('original');
      await ws.writeBytes('f.bin', source);
      source.fill(0x21);
      const first = await ws.readBytes('f.bin');
      first.content.fill(0x3f);
      expect(Buffer.from((await ws.readBytes('f.bin')).content).toString()).toBe('original');
    });
  });

  describe('write', () => {
    const create = workspaces(harness);

    it('returns the path, the bytes this call wrote (UTF-8) and the mode', async () => {
      const ws = await create();
      expect(await ws.write('/a.txt', 'héllo')).toEqual({ path: 'a.txt', bytesWritten: 6, mode: 'overwrite' });
      expect(await ws.write('a.txt', '!', { mode: 'append' })).toEqual({ path: 'a.txt', bytesWritten: 1, mode: 'append' });
      expect(await ws.writeBytes('b.bin', new Uint8Array(3), { mode: 'create' })).toEqual({
        path: 'b.bin',
        bytesWritten: 3,
        mode: 'create',
      });
    });

    it('guesses a MIME type only from known extensions, never from an Object property name', async () => {
      const ws = await create();
      for (const name of ['x.constructor', 'x.toString', 'x.__proto__']) {
        await ws.write(name, '');
        const { mimeType } = await ws.stat(name);
        if (mimeType !== undefined) expect(mimeType, name).toBe('application/octet-stream');
      }
      const { mimeType } = await ws.stat((await ws.write('notes.md', '# hi')).path);
      if (mimeType !== undefined) expect(mimeType).toBe('text/markdown');
    });

    it('overwrites by default', async () => {
      const ws = await create();
      await ws.write('a.txt', 'first, longer');
      await ws.write('a.txt', 'second');
      expect((await ws.read('a.txt')).content).toBe('second');
    });

    it("'create' fails on an existing file and leaves it untouched", async () => {
      const ws = await create();
      await ws.write('a.txt', 'keep');
      await expectError(ws.write('a.txt', 'replace', { mode: 'create' }), 'FileExistsError', 'EEXIST');
      expect((await ws.read('a.txt')).content).toBe('keep');
      await ws.write('new.txt', 'fresh', { mode: 'create' });
      expect((await ws.read('new.txt')).content).toBe('fresh');
    });

    it("'append' appends and creates a missing file", async () => {
      const ws = await create();
      await ws.write('log.txt', 'one\n', { mode: 'append' });
      await ws.write('log.txt', 'two\n', { mode: 'append' });
      await ws.writeBytes('log.txt', bytes('three\n'), { mode: 'append' });
      expect((await ws.read('log.txt')).content).toBe('one\ntwo\nthree');
    });

    it('creates parents by default and refuses without them when createParents is false', async () => {
      const ws = await create();
      await ws.write('a/b/c.txt', 'x');
      expect((await ws.stat('a/b')).isDirectory).toBe(true);
      await expectError(ws.write('missing/c.txt', 'x', { createParents: false }), 'FileNotFoundError', 'ENOENT');
      expect(await ws.exists('missing')).toBe(false);
      await ws.write('a/d.txt', 'y', { createParents: false });
      expect((await ws.read('a/d.txt')).content).toBe('y');
    });

    it('never lets a path be both a file and a directory', async () => {
      const ws = await create();
      await ws.write('file', 'x');
      await ws.mkdir('dir');
      await expectError(ws.write('dir', 'x'), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.write('/', 'x'), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.write('file/child.txt', 'x'), 'NotADirectoryError', 'ENOTDIR');
      await expectError(ws.mkdir('file/sub'), 'NotADirectoryError', 'ENOTDIR');
      await expectError(ws.mkdir('file'), 'FileExistsError', 'EEXIST');
      expect(await contentsOf(ws)).toEqual({ 'dir/': '', file: 'x' });
    });

    it('validates the mode and the content type', async () => {
      const ws = await create();
      await expectError(ws.write('a', 'x', { mode: 'truncate' as never }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.write('a', 42 as unknown as string), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.writeBytes('a', 'text' as unknown as Uint8Array), 'InvalidArgumentError', 'EINVAL');
      expect(await ws.exists('a')).toBe(false);
    });

    it('writes empty files', async () => {
      const ws = await create();
      expect(await ws.write('empty.txt', '')).toMatchObject({ bytesWritten: 0 });
      expect(await ws.read('empty.txt')).toMatchObject({ content: '', totalLines: 0 });
      expect((await ws.stat('empty.txt')).sizeBytes).toBe(0);
    });
  });

  describe('exists and stat', () => {
    const create = workspaces(harness);

    it('exists is true for files, directories and the root, false for anything missing or outside', async () => {
      const ws = await create();
      await ws.write('a/b.txt', 'x');
      expect(await ws.exists('a/b.txt')).toBe(true);
      expect(await ws.exists('a')).toBe(true);
      expect(await ws.exists('')).toBe(true);
      expect(await ws.exists('a/c.txt')).toBe(false);
      expect(await ws.exists('a/b.txt/deeper')).toBe(false);
      expect(await ws.exists('../outside')).toBe(false);
      expect(await ws.exists('/../../etc/passwd')).toBe(false);
    });

    it('stat describes files and directories', async () => {
      const ws = await create();
      await ws.write('src/a.ts', 'export {}\n');
      const file = await ws.stat('src/a.ts');
      expect(file).toMatchObject({ path: 'src/a.ts', isFile: true, isDirectory: false, isSymlink: false, sizeBytes: 10 });
      const dir = await ws.stat('src');
      expect(dir).toMatchObject({ path: 'src', isFile: false, isDirectory: true, isSymlink: false });
      if (file.modifiedAt !== undefined) expect(file.modifiedAt).toBeInstanceOf(Date);
      await expectError(ws.stat('nope'), 'FileNotFoundError', 'ENOENT');
    });
  });
}
