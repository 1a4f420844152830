import { symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostDriver } from '../../src/backends/host/index.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { WORKSPACE_TOOL_NAMES, workspacePrompt } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import type { ToolResult } from '../../src/session/types.js';
import { SESSION_BACKENDS } from '../support/backends.js';
import { codeOf, toolCaller } from './helpers.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';

async function seed(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('src/main.ts', 'import { greet } from "./greet";\n\nconsole.log(greet("world"));\n');
  await ws.write('src/greet.ts', 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n');
  await ws.write('README.md', '# Demo\n\nTODO: write docs\nTODO: add tests\n');
  await ws.mkdir('empty');
  await ws.writeBytes('logo.bin', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x80]));
}

for (const backend of SESSION_BACKENDS) {
  describe(`workspace tools on ${backend.name}`, () => {
    let ws: SnapshotableWorkspace;
    let call: ReturnType<typeof toolCaller>;
    const results: ToolResult[] = [];

    beforeEach(async () => {
      ws = await backend.create();
      await seed(ws);
      const raw = toolCaller(ws);
      call = async (name, params) => {
        const result = await raw(name, params);
        results.push(result);
        return result;
      };
    });

    afterEach(async () => {
      // No message or value ever carries a host path.
      for (const result of results.splice(0)) {
        const text = `${result.message}\n${JSON.stringify(result.value ?? null)}`;
        if (ws.root !== '/') expect(text).not.toContain(ws.root);
        expect(text).not.toContain(tmpdir());
      }
      await ws.dispose();
    });

    describe('list_directory', () => {
      it('lists the root, marking directories', async () => {
        const result = await call('list_directory', {});
        expect(result.success).toBe(true);
        expect(result.message).toContain('README.md\n');
        expect(result.message).toContain('empty/');
        expect(result.message).toContain('src/');
        expect(result.message).not.toMatch(/README\.md\//);
      });

      it('says when a directory is empty, and caps long listings', async () => {
        expect((await call('list_directory', { path: 'empty' })).message).toBe('empty is an empty directory.');
        for (let i = 0; i < 5; i += 1) await ws.write(`many/f${i}.txt`, 'x');
        const capped = await toolCaller(ws, { maxListEntries: 3 })('list_directory', { path: '/many' });
        expect(capped.message).toContain('and 2 more entries not shown');
        expect(capped.message).not.toContain('f4.txt');
      });

      it('fails with ENOENT for a missing directory and ENOTDIR for a file', async () => {
        const missing = await call('list_directory', { path: 'nope' });
        expect(missing.success).toBe(false);
        expect(codeOf(missing)).toBe('ENOENT');
        expect(missing.message).toMatch(/^Error \[ENOENT\]: nope does not exist\. .*glob/);
        const file = await call('list_directory', { path: 'README.md' });
        expect(codeOf(file)).toBe('ENOTDIR');
        expect(file.message).toContain('use read_file');
      });

      it('refuses a path that climbs above the root', async () => {
        const result = await call('list_directory', { path: '../..' });
        expect(result.success).toBe(false);
        expect(codeOf(result)).toBe('EACCES');
        expect(result.message).toContain('inside the workspace');
      });
    });

    describe('read_file', () => {
      it('returns numbered lines', async () => {
        const result = await call('read_file', { path: '/src/greet.ts' });
        expect(result.success).toBe(true);
        expect(result.message).toBe(
          '     1\texport function greet(name: string): string {\n     2\t  return `Hello, ${name}!`;\n     3\t}',
        );
        expect(result.value).toMatchObject({ path: 'src/greet.ts', totalLines: 3, startLine: 1, endLine: 3, truncated: false });
      });

      it('reads a window and says how to read on when truncated', async () => {
        await ws.write('long.txt', Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n'));
        const result = await call('read_file', { path: 'long.txt', offset: 10, limit: 5 });
        expect(result.message.split('\n')[0]).toBe('    10\tline 10');
        expect(result.message).toContain('Showing lines 10-14 of 50. To read on, call read_file with path "long.txt" and offset 15.');
        const next = await call('read_file', { path: 'long.txt', offset: 15 });
        expect(next.message.split('\n')[0]).toBe('    15\tline 15');
        expect(next.message).toContain('Showing lines 15-50 of 50 (end of file).');
        const capped = await toolCaller(ws, { maxReadLines: 20 })('read_file', { path: 'long.txt', limit: 100 });
        expect(capped.message).toContain('offset 21');
      });

      it('caps characters per call and cuts very long lines', async () => {
        await ws.write('wide.txt', `${'a'.repeat(30)}\n${'b'.repeat(30)}\n${'c'.repeat(5000)}\n`);
        const read = toolCaller(ws, { maxReadChars: 50, maxLineChars: 40 });
        const first = await read('read_file', { path: 'wide.txt' });
        expect(first.message).toContain('Showing lines 1-1 of 3');
        expect(first.message).toContain('offset 2');
        const third = await read('read_file', { path: 'wide.txt', offset: 3 });
        expect(third.message).toContain('[line cut: 5000 characters]');
        expect(third.message).toContain('use grep');
      });

      it('handles empty files and offsets past the end', async () => {
        await ws.write('empty.txt', '');
        expect((await call('read_file', { path: 'empty.txt' })).message).toBe('empty.txt is empty (0 lines).');
        const past = await call('read_file', { path: 'README.md', offset: 99 });
        expect(past.success).toBe(true);
        expect(past.message).toContain('has 4 lines; offset 99 is past the end');
      });

      it('fails clearly for missing files, directories, binary files and escapes', async () => {
        const missing = await call('read_file', { path: 'src/nope.ts' });
        expect(missing.message).toMatch(/^Error \[ENOENT\]: src\/nope\.ts does not exist/);
        const dir = await call('read_file', { path: 'src' });
        expect(codeOf(dir)).toBe('EISDIR');
        expect(dir.message).toContain('list_directory');
        const binary = await call('read_file', { path: 'logo.bin' });
        expect(codeOf(binary)).toBe('EILSEQ');
        expect(binary.message).toContain('is not a text file (it looks binary)');
        expect(binary.message).not.toContain('readBytes');
        const escape = await call('read_file', { path: '../../../etc/passwd' });
        expect(codeOf(escape)).toBe('EACCES');
        const hostLooking = await call('read_file', { path: '/home/someone/project/a.ts' });
        expect(hostLooking.message).toContain("A leading '/' means the workspace root, not the host's");
        const bad = await call('read_file', { path: 'src\\main.ts' });
        expect(codeOf(bad)).toBe('EINVAL');
        expect(bad.message).toContain("'/' as the separator");
      });
    });

    describe('write_file', () => {
      it('creates, overwrites and appends', async () => {
        const created = await call('write_file', { path: 'notes/todo.md', content: 'one\n' });
        expect(created).toMatchObject({ success: true, message: 'Created notes/todo.md (4 bytes).' });
        const over = await call('write_file', { path: 'notes/todo.md', content: 'two\n' });
        expect(over.message).toBe('Overwrote notes/todo.md (4 bytes).');
        const appended = await call('write_file', { path: 'notes/todo.md', content: 'three\n', mode: 'append' });
        expect(appended.message).toBe('Appended 6 bytes to notes/todo.md.');
        expect((await ws.read('notes/todo.md')).content).toBe('two\nthree');
      });

      it('refuses content over the tool-level limit, saying how to split it, and writes nothing', async () => {
        const result = await call('write_file', { path: 'big.txt', content: 'x'.repeat(48_001) });
        expect(result.success).toBe(false);
        expect(codeOf(result)).toBe('EFBIG');
        expect(result.message).toContain('at most 48000');
        expect(result.message).toContain("mode 'append'");
        expect(await ws.exists('big.txt')).toBe(false);
        expect((await call('write_file', { path: 'ok.txt', content: 'x'.repeat(48_000) })).success).toBe(true);
        const small = await toolCaller(ws, { maxWriteChars: 10 })('write_file', { path: 'small.txt', content: 'x'.repeat(11) });
        expect(codeOf(small)).toBe('EFBIG');
      });

      it("fails with EEXIST in mode 'create' and EISDIR onto a directory", async () => {
        const exists = await call('write_file', { path: 'README.md', content: 'x', mode: 'create' });
        expect(codeOf(exists)).toBe('EEXIST');
        expect(exists.message).toContain("mode 'overwrite'");
        const dir = await call('write_file', { path: 'src', content: 'x' });
        expect(codeOf(dir)).toBe('EISDIR');
        const under = await call('write_file', { path: 'README.md/x.txt', content: 'x' });
        expect(codeOf(under)).toBe('ENOTDIR');
        const escape = await call('write_file', { path: '/../outside.txt', content: 'x' });
        expect(codeOf(escape)).toBe('EACCES');
        const deep = await call('write_file', { path: `${'d/'.repeat(20)}f.txt`, content: 'x' });
        expect(codeOf(deep)).toBe('EFBIG');
      });
    });

    describe('edit_file', () => {
      it('replaces a unique exact match and reports it', async () => {
        const result = await call('edit_file', { path: 'src/greet.ts', old_string: 'Hello', new_string: 'Hi' });
        expect(result).toMatchObject({ success: true, message: 'Replaced 1 occurrence in src/greet.ts (at line 2).' });
        expect((await ws.read('src/greet.ts')).content).toContain('`Hi, ${name}!`');
      });

      it('replaces every occurrence with replace_all and keeps special replacement characters literal', async () => {
        const result = await call('edit_file', { path: 'README.md', old_string: 'TODO', new_string: '$& DONE', replace_all: true });
        expect(result.message).toBe('Replaced 2 occurrences in README.md.');
        expect((await ws.read('README.md')).content).toBe('# Demo\n\n$& DONE: write docs\n$& DONE: add tests');
      });

      it('refuses an ambiguous match, naming the lines', async () => {
        const result = await call('edit_file', { path: 'README.md', old_string: 'TODO', new_string: 'DONE' });
        expect(result.success).toBe(false);
        expect(codeOf(result)).toBe('EINVAL');
        expect(result.value).toMatchObject({ reason: 'ambiguous' });
        expect(result.message).toContain('occurs 2 times in README.md (at lines 3, 4)');
        expect(result.message).toContain('replace_all: true');
        expect((await ws.read('README.md')).content).toContain('TODO: write docs');
      });

      it('says clearly when the text is not found, with a hint', async () => {
        const missing = await call('edit_file', { path: 'src/greet.ts', old_string: 'Goodbye', new_string: 'x' });
        expect(missing.value).toMatchObject({ code: 'EINVAL', reason: 'no_match' });
        expect(missing.message).toContain('old_string was not found in src/greet.ts');
        const spacing = await call('edit_file', { path: 'src/greet.ts', old_string: 'return   `Hello', new_string: 'x' });
        expect(spacing.message).toContain('whitespace is ignored');
        const numbered = await call('edit_file', { path: 'src/greet.ts', old_string: '     2\t  return', new_string: 'x' });
        expect(numbered.message).toContain('line-number prefixes');
        await ws.write('crlf.txt', 'a\r\nb\r\n');
        const crlf = await call('edit_file', { path: 'crlf.txt', old_string: 'a\nb', new_string: 'c' });
        expect(crlf.message).toContain('CRLF');
      });

      it('refuses empty and no-op edits, oversized new_string, missing and binary files', async () => {
        expect((await call('edit_file', { path: 'README.md', old_string: '', new_string: 'x' })).message).toContain('use write_file');
        expect((await call('edit_file', { path: 'README.md', old_string: 'Demo', new_string: 'Demo' })).value).toMatchObject({
          reason: 'no_change',
        });
        const big = await toolCaller(ws, { maxWriteChars: 5 })('edit_file', {
          path: 'README.md',
          old_string: 'Demo',
          new_string: '123456',
        });
        expect(codeOf(big)).toBe('EFBIG');
        expect(codeOf(await call('edit_file', { path: 'nope.md', old_string: 'a', new_string: 'b' }))).toBe('ENOENT');
        expect(codeOf(await call('edit_file', { path: 'logo.bin', old_string: 'a', new_string: 'b' }))).toBe('EILSEQ');
        expect(codeOf(await call('edit_file', { path: 'src', old_string: 'a', new_string: 'b' }))).toBe('EISDIR');
      });

      it('keeps the trailing newline and a byte-order mark', async () => {
        await ws.write('bom.txt', '\uFEFFalpha\nbeta\n');
        await call('edit_file', { path: 'bom.txt', old_string: 'beta', new_string: 'gamma' });
        expect(new TextDecoder('utf-8', { ignoreBOM: true }).decode((await ws.readBytes('bom.txt')).content)).toBe('\uFEFFalpha\ngamma\n');
      });
    });

    describe('read-before-write policy', () => {
      it('is off by default', async () => {
        expect((await call('edit_file', { path: 'src/greet.ts', old_string: 'Hello', new_string: 'Hi' })).success).toBe(true);
      });

      it('refuses to change an existing unread file, and allows it after read_file', async () => {
        const strict = toolCaller(ws, { readBeforeWrite: true });
        const edit = await strict('edit_file', { path: 'src/greet.ts', old_string: 'Hello', new_string: 'Hi' });
        expect(edit.value).toMatchObject({ code: 'ETOOL', reason: 'not_read', path: 'src/greet.ts' });
        expect(edit.message).toContain('Read it with read_file first');
        const overwrite = await strict('write_file', { path: '/src/greet.ts', content: 'x' });
        expect(overwrite.value).toMatchObject({ reason: 'not_read' });
        const append = await strict('write_file', { path: 'src/greet.ts', content: 'x', mode: 'append' });
        expect(append.value).toMatchObject({ reason: 'not_read' });
        expect((await ws.read('src/greet.ts')).content).toContain('Hello');

        expect((await strict('read_file', { path: './src//greet.ts', limit: 1 })).success).toBe(true);
        expect((await strict('edit_file', { path: 'src/greet.ts', old_string: 'Hello', new_string: 'Hi' })).success).toBe(true);
      });

      it('lets a model change files it created, and follows moves', async () => {
        const strict = toolCaller(ws, { readBeforeWrite: true });
        expect((await strict('write_file', { path: 'new.txt', content: 'a' })).success).toBe(true);
        expect((await strict('edit_file', { path: 'new.txt', old_string: 'a', new_string: 'b' })).success).toBe(true);
        expect((await strict('move', { source: 'new.txt', destination: 'moved.txt' })).success).toBe(true);
        expect((await strict('write_file', { path: 'moved.txt', content: 'c' })).success).toBe(true);
        await strict('delete', { path: 'moved.txt' });
        await ws.write('moved.txt', 'someone else');
        expect((await strict('write_file', { path: 'moved.txt', content: 'd' })).value).toMatchObject({ reason: 'not_read' });
      });

      it('tracks reads per workspace', async () => {
        const strict = toolCaller(ws, { readBeforeWrite: true });
        await strict('read_file', { path: 'README.md' });
        const other = await backend.create();
        try {
          await seed(other);
          const tools = workspaceTools({ readBeforeWrite: true });
          const edit = tools.find((t) => t.name === 'edit_file');
          const result = await edit?.handler(
            { path: 'README.md', old_string: '# Demo', new_string: '# Other' },
            { filesystem: other, session: {} as never },
          );
          expect(result?.value).toMatchObject({ reason: 'not_read' });
        } finally {
          await other.dispose();
        }
      });
    });

    describe('glob', () => {
      it('finds files, sorted and relative to the root', async () => {
        const result = await call('glob', { pattern: '**/*.ts' });
        expect(result.message).toBe('2 files match "**/*.ts":\nsrc/greet.ts\nsrc/main.ts');
        expect((await call('glob', { pattern: '*.ts', path: 'src' })).value).toMatchObject({
          paths: ['src/greet.ts', 'src/main.ts'],
          total: 2,
        });
      });

      it('says when nothing matches, when the base is missing, and when more exist', async () => {
        expect((await call('glob', { pattern: '*.py' })).message).toBe('No files match "*.py" under /.');
        expect((await call('glob', { pattern: '*', path: 'nowhere' })).message).toContain('Note: nowhere does not exist.');
        for (let i = 0; i < 5; i += 1) await ws.write(`many/f${i}.txt`, 'x');
        const capped = await toolCaller(ws, { maxGlobResults: 2 })('glob', { pattern: 'many/*.txt' });
        expect(capped.message).toContain('5 files match "many/*.txt"; showing the first 2. Narrow the pattern');
        expect(capped.value).toMatchObject({ total: 5, truncated: true });
      });

      it('refuses an escaping base path', async () => {
        expect(codeOf(await call('glob', { pattern: '*', path: '..' }))).toBe('EACCES');
      });
    });

    describe('grep', () => {
      it('finds matching lines as path:line: text', async () => {
        const result = await call('grep', { pattern: 'greet\\(' });
        expect(result.message).toBe(
          '2 matches:\nsrc/greet.ts:1: export function greet(name: string): string {\nsrc/main.ts:3: console.log(greet("world"));',
        );
        const ci = await call('grep', { pattern: 'todo', ignore_case: true, glob: '*.md' });
        expect(ci.value).toMatchObject({
          matches: [
            { path: 'README.md', lineNumber: 3 },
            { path: 'README.md', lineNumber: 4 },
          ],
        });
      });

      it('caps matches and says more exist', async () => {
        const result = await call('grep', { pattern: 'e', max_matches: 2 });
        expect(result.message).toMatch(
          /^More than 2 matches; showing the first 2\. Narrow the search with path or glob, or raise max_matches \(up to 1000\)\./,
        );
        expect(result.value).toMatchObject({ truncated: true });
        expect((result.value as { matches: unknown[] }).matches).toHaveLength(2);
      });

      it('says when nothing matches and refuses an invalid regex with a hint', async () => {
        expect((await call('grep', { pattern: 'zzz', path: 'src' })).message).toBe('No matches for "zzz" under src.');
        const bad = await call('grep', { pattern: 'greet(' });
        expect(codeOf(bad)).toBe('EINVAL');
        expect(bad.message).toContain('invalid regular expression');
        expect(bad.message).toContain('escape ( ) [ ]');
      });
    });

    describe('delete, mkdir, move, copy, stat', () => {
      it('deletes files and directories, needing recursive for a non-empty one', async () => {
        expect((await call('delete', { path: 'README.md' })).message).toBe('Deleted README.md.');
        const full = await call('delete', { path: 'src' });
        expect(codeOf(full)).toBe('ENOTEMPTY');
        expect(full.message).toContain('recursive: true');
        expect((await call('delete', { path: 'src', recursive: true })).message).toBe('Deleted directory src.');
        expect(codeOf(await call('delete', { path: 'src' }))).toBe('ENOENT');
        expect(codeOf(await call('delete', { path: '/' }))).toBe('EINVAL');
      });

      it('creates directories', async () => {
        expect((await call('mkdir', { path: 'a/b/c' })).message).toBe('Created directory a/b/c.');
        expect((await call('mkdir', { path: 'a/b' })).message).toBe('Directory a/b already exists.');
        expect(codeOf(await call('mkdir', { path: 'README.md' }))).toBe('EEXIST');
        expect(codeOf(await call('mkdir', { path: '../x' }))).toBe('EACCES');
      });

      it('moves, refusing an existing destination unless overwrite', async () => {
        expect((await call('move', { source: 'src/main.ts', destination: 'src/index.ts' })).message).toBe(
          'Moved src/main.ts to src/index.ts.',
        );
        const clash = await call('move', { source: 'src/index.ts', destination: 'src/greet.ts' });
        expect(codeOf(clash)).toBe('EEXIST');
        expect(clash.message).toContain('overwrite: true');
        expect((await call('move', { source: 'src/index.ts', destination: 'src/greet.ts', overwrite: true })).success).toBe(true);
        expect(codeOf(await call('move', { source: 'gone.ts', destination: 'x.ts' }))).toBe('ENOENT');
        expect(codeOf(await call('move', { source: 'src/greet.ts', destination: '../../x.ts' }))).toBe('EACCES');
      });

      it('copies files, and directories only with recursive', async () => {
        expect((await call('copy', { source: 'README.md', destination: 'docs/README.md' })).message).toBe(
          'Copied README.md to docs/README.md.',
        );
        const dir = await call('copy', { source: 'src', destination: 'src2' });
        expect(codeOf(dir)).toBe('EISDIR');
        expect(dir.message).toContain('recursive: true');
        expect((await call('copy', { source: 'src', destination: 'src2', recursive: true })).success).toBe(true);
        expect(await ws.exists('src2/greet.ts')).toBe(true);
        expect(codeOf(await call('copy', { source: 'README.md', destination: 'docs/README.md' }))).toBe('EEXIST');
      });

      it('stats files and directories', async () => {
        const file = await call('stat', { path: 'README.md' });
        expect(file.message).toMatch(/^README\.md: file, 41 bytes/);
        expect(file.value).toMatchObject({ path: 'README.md', type: 'file', sizeBytes: 41 });
        expect((await call('stat', { path: '/' })).message).toMatch(/^\/: directory/);
        expect(codeOf(await call('stat', { path: 'nope' }))).toBe('ENOENT');
      });
    });

    it('refuses every change on a read-only workspace with EROFS', async () => {
      const sealed = await backend.create();
      try {
        await seed(sealed);
        sealed.seal();
        const ro = toolCaller(sealed);
        for (const [name, params] of [
          ['write_file', { path: 'x.txt', content: 'x' }],
          ['edit_file', { path: 'README.md', old_string: '# Demo', new_string: '# X' }],
          ['delete', { path: 'README.md' }],
          ['mkdir', { path: 'd' }],
          ['move', { source: 'README.md', destination: 'R.md' }],
          ['copy', { source: 'README.md', destination: 'R.md' }],
        ] as const) {
          const result = await ro(name, params);
          expect(codeOf(result), name).toBe('EROFS');
          expect(result.message).toContain('read-only');
        }
        expect((await ro('read_file', { path: 'README.md' })).success).toBe(true);
      } finally {
        await sealed.dispose();
      }
    });
  });
}

describe('workspace tools on host: links that leave the root', () => {
  it('lists such a link by name and refuses to follow it, without a host path', async () => {
    const ws = createWorkspace(hostDriver());
    try {
      await seed(ws);
      symlinkSync(tmpdir(), join(ws.root, 'outside'));
      symlinkSync('README.md', join(ws.root, 'readme-link'));
      const call = toolCaller(ws);
      const listing = await call('list_directory', {});
      expect(listing.message).toContain('outside@ (link leading outside the workspace)');
      expect(listing.message).toContain('readme-link@');
      expect((await call('read_file', { path: 'readme-link' })).message).toContain('# Demo');
      expect((await call('delete', { path: 'readme-link' })).message).toBe('Deleted link readme-link.');
      expect(await ws.exists('README.md')).toBe(true);
      for (const result of [
        await call('read_file', { path: 'outside/anything' }),
        await call('list_directory', { path: 'outside' }),
        await call('write_file', { path: 'outside/planted.txt', content: 'x' }),
      ]) {
        expect(result.success).toBe(false);
        expect(['EACCES', 'ENOENT']).toContain(codeOf(result));
        expect(result.message).not.toContain(ws.root);
        expect(result.message).not.toContain(tmpdir());
      }
    } finally {
      await ws.dispose();
    }
  });
});

describe('tool definitions', () => {
  it('has the sixteen tools with snake_case JSON Schemas', () => {
    const tools = workspaceTools();
    expect(tools.map((t) => t.name)).toEqual([...WORKSPACE_TOOL_NAMES]);
    expect(tools).toHaveLength(16);
    expect(tools.at(-1)?.name).toBe('send_file');
    for (const tool of tools) {
      expect(tool.jsonSchema).toMatchObject({ type: 'object' });
      expect(tool.description.length).toBeGreaterThan(20);
      for (const key of Object.keys((tool.jsonSchema as { properties: object }).properties)) expect(key).toMatch(/^[a-z]+(_[a-z]+)*$/);
    }
    const edit = tools.find((t) => t.name === 'edit_file');
    expect(edit?.jsonSchema).toMatchObject({ required: ['path'] });
    expect(tools.find((t) => t.name === 'read_file')?.jsonSchema).toMatchObject({ required: ['path'] });
  });

  it('validates its options', () => {
    expect(() => workspaceTools({ maxWriteChars: 0 })).toThrow();
  });

  it('renders prompt guidance with the configured limits', () => {
    const prompt = workspacePrompt({ maxWriteChars: 1234, readBeforeWrite: true });
    for (const name of WORKSPACE_TOOL_NAMES) expect(prompt).toContain(`\`${name}`);
    expect(prompt).toContain('1234 characters');
    expect(prompt).toContain('rolled back');
    expect(prompt).toContain('Read an existing file');
    expect(workspacePrompt()).not.toContain('Read an existing file');
  });
});
