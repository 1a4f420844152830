import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { tempDirs } from '../../src/testing/harness.js';
import { disposing, SESSION_BACKENDS } from '../support/backends.js';
import { gitApply } from '../support/host-files.js';
import { codeOf, toolCaller } from './helpers.js';

const bytesOf = async (ws: SnapshotableWorkspace, path: string): Promise<Buffer> => Buffer.from((await ws.readBytes(path)).content);

for (const backend of SESSION_BACKENDS) {
  describe(`edit_file with edits[] and dry_run on ${backend.name}`, () => {
    const open = disposing(backend).create;
    const tempDir = tempDirs({ prefix: 'sessionfs-git-apply-' });

    it('applies the edits in order, each to the result of the ones before', async () => {
      const ws = open();
      await ws.write('app.ts', 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
      const result = await toolCaller(ws)('edit_file', {
        path: 'app.ts',
        edits: [
          { old_string: 'const a = 1;', new_string: 'let a = 10;' },
          { old_string: 'let a = 10;\nconst b', new_string: 'let a = 11;\nconst bee' },
          { old_string: 'const', new_string: 'var', replace_all: true },
        ],
      });
      expect(result.success).toBe(true);
      expect(result.message).toBe('Applied 3 edits to app.ts (4 replacements, first at lines 1, 1, 2).');
      expect(result.value).toMatchObject({ path: 'app.ts', replacements: 4, firstLines: [1, 1, 2] });
      expect((await bytesOf(ws, 'app.ts')).toString()).toBe('let a = 11;\nvar bee = 2;\nvar c = 3;\n');
    });

    it('is all or nothing: a failing second edit leaves the file untouched', async () => {
      const ws = open();
      const original = 'alpha\nbeta\ngamma\nbeta\n';
      await ws.write('list.txt', original);
      const call = toolCaller(ws);
      const missing = await call('edit_file', {
        path: 'list.txt',
        edits: [
          { old_string: 'alpha', new_string: 'ALPHA' },
          { old_string: 'delta', new_string: 'DELTA' },
        ],
      });
      expect(codeOf(missing)).toBe('EINVAL');
      expect(missing.value).toMatchObject({ reason: 'no_match' });
      expect(missing.message).toMatch(
        /^Error \[EINVAL\]: edits\[1\]: old_string was not found in list.txt \(after the edits before it\)\. Nothing was changed \(no edit of this call was applied\)\./,
      );
      const ambiguous = await call('edit_file', {
        path: 'list.txt',
        edits: [
          { old_string: 'gamma', new_string: 'GAMMA' },
          { old_string: 'beta', new_string: 'BETA' },
        ],
      });
      expect(ambiguous.value).toMatchObject({ reason: 'ambiguous' });
      expect(ambiguous.message).toContain('edits[1]: old_string occurs 2 times in list.txt (after the edits before it) (at lines 2, 4)');
      expect((await bytesOf(ws, 'list.txt')).toString()).toBe(original);
    });

    it('matches across line-ending styles and keeps CRLF and the BOM', async () => {
      const ws = open();
      await ws.writeBytes('win.txt', Buffer.from('\ufeffone\r\ntwo\r\nthree\r\n'));
      const result = await toolCaller(ws)('edit_file', {
        path: 'win.txt',
        edits: [
          { old_string: 'one\ntwo', new_string: 'ONE\nTWO' },
          { old_string: 'three\r\n', new_string: 'three\nfour\n' },
        ],
      });
      expect(result.success).toBe(true);
      expect(result.message).toContain('kept BOM, CRLF line endings');
      expect((await bytesOf(ws, 'win.txt')).toString()).toBe('\ufeffONE\r\nTWO\r\nthree\r\nfour\r\n');
    });

    it('refuses a call that mixes both forms, gives neither, or has an empty or identical edit', async () => {
      const ws = open();
      await ws.write('f.txt', 'x\n');
      const call = toolCaller(ws);
      const cases: [Record<string, unknown>, RegExp][] = [
        [
          { old_string: 'x', new_string: 'y', edits: [{ old_string: 'x', new_string: 'z' }] },
          /either old_string\/new_string\/replace_all or edits/,
        ],
        [{}, /give old_string and new_string/],
        [{ edits: [] }, /edits is empty/],
        [
          {
            edits: [
              { old_string: 'x', new_string: 'y' },
              { old_string: '', new_string: 'z' },
            ],
          },
          /edits\[1\]: old_string is empty/,
        ],
        [{ edits: [{ old_string: 'x', new_string: 'x' }] }, /edits\[0\]: old_string and new_string are identical/],
      ];
      for (const [params, message] of cases) {
        const result = await call('edit_file', { path: 'f.txt', ...params });
        expect(codeOf(result)).toBe('EINVAL');
        expect(result.message).toMatch(message);
      }
      expect((await bytesOf(ws, 'f.txt')).toString()).toBe('x\n');
    });

    it('dry_run returns a unified diff, writes nothing, and the diff applies with git apply', async () => {
      const files: [string, string][] = [
        ['plain.ts', 'import a from "a";\n\nexport function f() {\n  return a(1);\n}\n\nexport const g = 2;\n'],
        ['crlf.txt', 'first\r\nsecond\r\nthird\r\nfourth\r\n'],
        ['bom.txt', '\ufeffheader\nbody\n'],
        ['no-newline.txt', 'only line, no newline at the end'],
      ];
      const edits: Record<string, { old_string: string; new_string: string }[]> = {
        'plain.ts': [
          { old_string: 'return a(1);', new_string: 'return a(2);' },
          { old_string: 'export const g = 2;\n', new_string: '' },
        ],
        'crlf.txt': [{ old_string: 'second\nthird', new_string: 'SECOND\nTHIRD\nextra' }],
        'bom.txt': [{ old_string: 'header', new_string: 'HEADER' }],
        'no-newline.txt': [{ old_string: 'no newline', new_string: 'still no newline' }],
      };
      const ws = open();
      const call = toolCaller(ws);
      for (const [path, content] of files) {
        await ws.writeBytes(path, Buffer.from(content));
        const dry = await call('edit_file', { path, edits: edits[path], dry_run: true });
        expect(dry.success).toBe(true);
        expect(dry.message).toMatch(/^Dry run: .* would change .*; nothing was written\.\n--- a\//);
        expect(dry.message).not.toMatch(/[\r\ufeff]/);
        expect((await bytesOf(ws, path)).toString()).toBe(content);
        const diff = (dry.value as { diff: string }).diff;
        expect(diff).toMatch(new RegExp(`^--- a/${path}\n\\+\\+\\+ b/${path}\n@@ `));
        // The real `git apply` on the original bytes in a directory of their own gives what the edit must write.
        const dir = tempDir();
        writeFileSync(join(dir, path), content);
        await gitApply(dir, diff);
        const applied = readFileSync(join(dir, path));
        const real = await call('edit_file', { path, edits: edits[path] });
        expect(real.success).toBe(true);
        expect(applied).toEqual(await bytesOf(ws, path));
      }
    });
  });
}
