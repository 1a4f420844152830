import { describe, expect, it } from 'vitest';
import { workspaceTools } from '../../src/shell/index.js';
import { disposing, SESSION_BACKENDS } from '../support/backends.js';
import { codeOf, PNG, toolCaller, WAV } from './helpers.js';

for (const backend of SESSION_BACKENDS) {
  describe(`reading tools on ${backend.name}`, () => {
    const open = disposing(backend).create;

    it('read_file tail returns the last N lines, numbered as in the file', async () => {
      const ws = open();
      await ws.write('app.log', Array.from({ length: 50 }, (_, i) => `entry ${i + 1}`).join('\n') + '\n');
      const call = toolCaller(ws);
      const tail = await call('read_file', { path: 'app.log', tail: 3 });
      expect(tail.message).toBe('    48\tentry 48\n    49\tentry 49\n    50\tentry 50\n\nShowing lines 48-50 of 50 (end of file).');
      expect(tail.value).toMatchObject({ startLine: 48, endLine: 50, totalLines: 50, truncated: false });
      expect((await call('read_file', { path: 'app.log', tail: 500 })).value).toMatchObject({ startLine: 1, endLine: 50 });
      const both = await call('read_file', { path: 'app.log', tail: 3, offset: 2 });
      expect(codeOf(both)).toBe('EINVAL');
      expect(both.message).toContain('either tail or offset/limit');
    });

    it('read_many_files reads each file, reports per-file errors, and shares one character budget', async () => {
      const ws = open();
      await ws.write('a.txt', 'alpha\n');
      await ws.write('src/b.ts', 'export const b = 1;\r\n');
      await ws.writeBytes('bin.dat', new Uint8Array([0, 1, 2, 0, 255]));
      const call = toolCaller(ws);
      const result = await call('read_many_files', { paths: ['a.txt', 'missing.txt', 'src/b.ts', 'bin.dat'] });
      expect(result.success).toBe(true);
      expect(result.message).toMatch(
        /^Read 2 files; 2 could not be read\.\n\n==> a.txt <==\n {5}1\talpha\n\n==> missing.txt <==\nError \[ENOENT\]/,
      );
      expect(result.message).toContain('==> src/b.ts <==\n     1\texport const b = 1;\n\nline endings: CRLF');
      expect(result.message).toMatch(/==> bin.dat <==\nError \[EILSEQ\]/);
      const files = (result.value as { files: { ok: boolean; path: string; code?: string }[] }).files;
      expect(files.map((f) => [f.path, f.ok, f.code])).toEqual([
        ['a.txt', true, undefined],
        ['missing.txt', false, 'ENOENT'],
        ['src/b.ts', true, undefined],
        ['bin.dat', false, 'EILSEQ'],
      ]);

      const line = 'x'.repeat(99);
      for (const name of ['one', 'two', 'three']) await ws.write(`${name}.txt`, `${line}\n`.repeat(10));
      const capped = await toolCaller(ws, { maxReadChars: 1500 })('read_many_files', { paths: ['one.txt', 'two.txt', 'three.txt'] });
      expect(capped.message).toContain('To read on, call read_file with path "two.txt" and offset');
      expect(capped.message).toContain("Not read (this call's 1500-character budget is used up): three.txt.");
      expect(capped.message.length).toBeLessThan(2000);
      expect(capped.value).toMatchObject({ notRead: ['three.txt'] });
    });

    it('read_many_files counts as reading for the stale-write guard and read-before-write', async () => {
      const ws = open();
      await ws.write('notes.md', 'v1\n');
      const call = toolCaller(ws, { readBeforeWrite: true });
      expect(codeOf(await call('edit_file', { path: 'notes.md', old_string: 'v1', new_string: 'v2' }))).toBe('ETOOL');
      await call('read_many_files', { paths: ['notes.md'] });
      await ws.write('notes.md', 'v1 changed\n');
      expect(codeOf(await call('edit_file', { path: 'notes.md', old_string: 'v1', new_string: 'v2' }))).toBe('ECONFLICT');
      await call('read_many_files', { paths: ['notes.md'] });
      expect((await call('edit_file', { path: 'notes.md', old_string: 'v1', new_string: 'v2' })).success).toBe(true);
    });

    it('read_media returns images and audio as base64 with their MIME type, bytes intact', async () => {
      const ws = open();
      await ws.writeBytes('img/logo.png', PNG);
      await ws.writeBytes('img/misnamed.dat', PNG);
      await ws.writeBytes('sound.wav', WAV);
      const call = toolCaller(ws);
      const image = await call('read_media', { path: 'img/logo.png' });
      expect(image.message).toBe(`Image img/logo.png (image/png, ${PNG.length} bytes).`);
      const media = (image.value as { media: { type: string; mimeType: string; data: string } }).media;
      expect(media).toMatchObject({ type: 'image', mimeType: 'image/png' });
      expect(Buffer.from(media.data, 'base64')).toEqual(PNG);
      expect((await call('read_media', { path: 'img/misnamed.dat' })).value).toMatchObject({ mimeType: 'image/png' });
      const audio = await call('read_media', { path: 'sound.wav' });
      expect(audio.value).toMatchObject({ media: { type: 'audio', mimeType: 'audio/wav', data: WAV.toString('base64') } });
    });

    it('read_media refuses text, directories and files over the size limit', async () => {
      const ws = open();
      await ws.write('readme.md', '# hi\n');
      await ws.writeBytes('big.png', Buffer.concat([PNG, Buffer.alloc(2000)]));
      const call = toolCaller(ws, { maxMediaBytes: 1000 });
      const text = await call('read_media', { path: 'readme.md' });
      expect(codeOf(text)).toBe('EINVAL');
      expect(text.message).toContain('Use read_file for text');
      expect(codeOf(await call('read_media', { path: '/' }))).toBe('EISDIR');
      const big = await call('read_media', { path: 'big.png' });
      expect(codeOf(big)).toBe('EFBIG');
      expect(big.value).toMatchObject({ reason: 'too_large' });
    });

    it('directory_tree shows the tree with sizes to a depth, and says when it was cut', async () => {
      const ws = open();
      await ws.write('README.md', 'x'.repeat(2048));
      await ws.write('src/index.ts', '12345');
      await ws.write('src/lib/deep.ts', '1234567890');
      await ws.write('src/lib/deeper/deepest.ts', 'abc');
      await ws.mkdir('empty');
      const call = toolCaller(ws);
      const tree = await call('directory_tree', { depth: 2 });
      expect(tree.message).toBe(
        [
          '/ (5 entries shown):',
          '  README.md  2.0 KiB',
          '  empty/  0 B',
          '  src/',
          '    index.ts  5 B',
          '    lib/ …',
          '',
          'Directories ending in "…" are deeper than depth 2: call directory_tree on them, or with a larger depth.',
        ].join('\n'),
      );
      const whole = await call('directory_tree', { path: 'src' });
      expect(whole.message).toContain(
        'src (5 entries shown):\n  index.ts  5 B\n  lib/  13 B\n    deep.ts  10 B\n    deeper/  3 B\n      deepest.ts  3 B',
      );
      expect(whole.value).toMatchObject({
        truncated: false,
        entries: expect.arrayContaining([{ path: 'src/lib', type: 'directory', expanded: true, sizeBytes: 13 }]),
      });

      const capped = await toolCaller(ws, { maxTreeEntries: 4 })('directory_tree', { depth: 5 });
      expect(capped.value).toMatchObject({ truncated: true });
      expect((capped.value as { entries: unknown[] }).entries).toHaveLength(4);
      expect(capped.message).toContain('Cut at 4 entries: not everything is shown.');
      expect(codeOf(await call('directory_tree', { path: 'README.md' }))).toBe('ENOTDIR');
    });

    it('file_info says whether a file is text (encoding, endings, lines), media or binary, and what a directory holds', async () => {
      const ws = open();
      await ws.writeBytes('win.txt', Buffer.from('\ufeffone\r\ntwo\r\n'));
      await ws.writeBytes('pic.png', PNG);
      await ws.writeBytes('blob.bin', new Uint8Array([0, 1, 2, 0, 255]));
      await ws.mkdir('dir/sub', { parents: true });
      await ws.write('dir/f.txt', 'x');
      const call = toolCaller(ws);
      const text = await call('file_info', { path: 'win.txt' });
      expect(text.message).toMatch(/^win.txt: file, 13 bytes, .*text: 2 lines, utf-8 with BOM, line endings CRLF$/);
      expect(text.value).toMatchObject({ kind: 'text', lines: 2, bom: true, lineEndings: 'CRLF', sizeBytes: 13 });
      expect((await call('file_info', { path: 'pic.png' })).message).toContain('image (image/png): read it with read_media');
      expect((await call('file_info', { path: 'blob.bin' })).value).toMatchObject({ kind: 'binary' });
      const dir = await call('file_info', { path: 'dir' });
      expect(dir.message).toContain('1 file and 1 directory directly inside');
      expect(dir.value).toMatchObject({ type: 'directory', files: 1, directories: 1 });
    });
  });
}

describe('tool annotations', () => {
  it('every tool carries readOnlyHint, destructiveHint and idempotentHint matching what it does', () => {
    const tools = workspaceTools({ shell: true });
    const readOnly = new Set([
      'list_directory',
      'read_file',
      'glob',
      'grep',
      'stat',
      'read_many_files',
      'read_media',
      'directory_tree',
      'file_info',
    ]);
    for (const tool of tools) {
      const { annotations } = tool;
      expect(annotations, tool.name).toBeDefined();
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
        expect(typeof annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
      expect(annotations?.readOnlyHint, tool.name).toBe(readOnly.has(tool.name));
      if (readOnly.has(tool.name)) expect(annotations).toMatchObject({ destructiveHint: false, idempotentHint: true });
    }
    const byName = new Map(tools.map((t) => [t.name, t.annotations]));
    expect(byName.get('mkdir')).toMatchObject({ destructiveHint: false, idempotentHint: true });
    expect(byName.get('write_file')).toMatchObject({ destructiveHint: true, idempotentHint: false });
    expect(byName.get('delete')).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(byName.get('bash')).toMatchObject({ destructiveHint: true, idempotentHint: false, openWorldHint: false });
  });
});
