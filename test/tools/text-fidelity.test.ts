import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { codeOf, toolCaller } from './helpers.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { disposing, SESSION_BACKENDS } from '../support/backends.js';

const encode = (text: string, encoding: string, addBOM = false): Uint8Array => new Uint8Array(iconv.encode(text, encoding, { addBOM }));
/** A member of `target`, methods bound to it (its private fields need the real receiver). */
const bound = (target: object, key: string | symbol): unknown => {
  const value: unknown = Reflect.get(target, key);
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
};
const bytesOf = async (ws: SnapshotableWorkspace, path: string): Promise<Buffer> => Buffer.from((await ws.readBytes(path)).content);

for (const backend of SESSION_BACKENDS) {
  describe(`text fidelity in the tools on ${backend.name}`, () => {
    const open = disposing(backend).create;

    it('read_file shows a CRLF file without \\r and says CRLF once; edit_file with LF text keeps CRLF', async () => {
      const ws = open();
      await ws.write('win.txt', 'one\r\ntwo\r\nthree\r\n');
      const call = toolCaller(ws);
      const read = await call('read_file', { path: 'win.txt' });
      expect(read.message).not.toContain('\r');
      expect(read.message.match(/CRLF/g)).toHaveLength(1);
      expect(read.value).toMatchObject({ lineEndings: 'CRLF' });
      const edit = await call('edit_file', { path: 'win.txt', old_string: 'two\nthree', new_string: 'TWO\nTHREE\nFOUR' });
      expect(edit.success).toBe(true);
      expect((await bytesOf(ws, 'win.txt')).toString()).toBe('one\r\nTWO\r\nTHREE\r\nFOUR\r\n');
    });

    it('write_file over a CRLF file writes CRLF (and as given with preserveLineEndings: false)', async () => {
      const ws = open();
      await ws.write('win.txt', 'a\r\nb\r\n');
      await toolCaller(ws)('write_file', { path: 'win.txt', content: 'x\ny\n' });
      expect((await bytesOf(ws, 'win.txt')).toString()).toBe('x\r\ny\r\n');
      await toolCaller(ws, { preserveLineEndings: false, staleWriteGuard: false })('write_file', { path: 'win.txt', content: 'p\nq\n' });
      expect((await bytesOf(ws, 'win.txt')).toString()).toBe('p\nq\n');
    });

    it('never shows a BOM, matches as if absent, and keeps it on edit and overwrite', async () => {
      const ws = open();
      await ws.writeBytes('bom.txt', encode('first line\nsecond\n', 'utf-8', true));
      const call = toolCaller(ws);
      const read = await call('read_file', { path: 'bom.txt' });
      expect(read.message).not.toContain('\ufeff');
      expect(read.message).toContain('     1\tfirst line');
      expect((await call('edit_file', { path: 'bom.txt', old_string: 'first line', new_string: 'line one' })).success).toBe(true);
      expect(await bytesOf(ws, 'bom.txt')).toEqual(Buffer.from(encode('line one\nsecond\n', 'utf-8', true)));
      await call('write_file', { path: 'bom.txt', content: 'replaced\n' });
      expect(await bytesOf(ws, 'bom.txt')).toEqual(Buffer.from(encode('replaced\n', 'utf-8', true)));
    });

    it.each([
      ['ISO-8859-1', 'latin1', "Le garçon a mangé à l'hôtel, près de la forêt.\nÉté déjà passé.\n".repeat(4)],
      ['windows-1252', 'windows-1252', '“Smart quotes” — and the € sign, in a note.\nSecond line with ‘more’ quotes.\n'.repeat(4)],
      ['Shift_JIS', 'Shift_JIS', 'これは日本語のテキストファイルです。\n二行目もあります。\n'.repeat(3)],
      ['UTF-16LE', 'utf-16le', 'wide text\r\nsecond line\r\n'],
      ['UTF-16BE', 'utf-16be', 'big endian text\nline two\n'],
    ])('reads, names, edits and overwrites a %s file in its own encoding', async (name, encoding, text) => {
      const ws = open();
      const bom = name.startsWith('UTF-16');
      await ws.writeBytes('legacy.txt', encode(text, encoding, bom));
      const call = toolCaller(ws);
      const read = await call('read_file', { path: 'legacy.txt' });
      expect(read.success).toBe(true);
      expect(read.message).toContain(`encoding: ${name}`);
      const firstLine = text.split(/\r?\n/)[0] as string;
      expect(read.message).toContain(firstLine);
      const edit = await call('edit_file', { path: 'legacy.txt', old_string: firstLine, new_string: `${firstLine}!`, replace_all: true });
      expect(edit.success).toBe(true);
      expect(await bytesOf(ws, 'legacy.txt')).toEqual(Buffer.from(encode(text.split(firstLine).join(`${firstLine}!`), encoding, bom)));
      await call('write_file', { path: 'legacy.txt', content: `${firstLine}\n` });
      const crlf = text.includes('\r\n') ? '\r\n' : '\n';
      expect(await bytesOf(ws, 'legacy.txt')).toEqual(Buffer.from(encode(`${firstLine}${crlf}`, encoding, bom)));
    });

    it('an unencodable character fails with EILSEQ naming it and its line, and nothing is written', async () => {
      const ws = open();
      const original = encode('Le café crème coûte douze francs.\nfin\n'.repeat(3), 'latin1');
      await ws.writeBytes('prix.txt', original);
      const call = toolCaller(ws);
      await call('read_file', { path: 'prix.txt' });
      const edit = await call('edit_file', { path: 'prix.txt', old_string: 'fin', new_string: 'fin ✓', replace_all: true });
      expect(codeOf(edit)).toBe('EILSEQ');
      expect(edit.message).toMatch(/'✓' \(U\+2713\) on line 2/);
      expect(await bytesOf(ws, 'prix.txt')).toEqual(Buffer.from(original));
    });

    it('an explicit encoding overrides detection, and an unknown one is EINVAL', async () => {
      const ws = open();
      await ws.writeBytes('ambiguous.txt', encode('Grüße\n', 'latin1'));
      const call = toolCaller(ws);
      expect((await call('read_file', { path: 'ambiguous.txt', encoding: 'latin1' })).message).toContain('Grüße');
      expect(codeOf(await call('read_file', { path: 'ambiguous.txt', encoding: 'no-such-charset' }))).toBe('EINVAL');
    });

    it('refuses a stale write: the orchestrator changed the file after the model read it', async () => {
      const ws = open();
      await ws.write('shared.md', 'v1\n');
      const call = toolCaller(ws);
      await call('read_file', { path: 'shared.md' });
      await ws.write('shared.md', 'v1\norchestrator line\n');
      for (const attempt of [
        call('edit_file', { path: 'shared.md', old_string: 'v1', new_string: 'v2' }),
        call('write_file', { path: 'shared.md', content: 'model version\n' }),
      ]) {
        const result = await attempt;
        expect(codeOf(result)).toBe('ECONFLICT');
        expect(result.value).toMatchObject({ reason: 'stale' });
        expect(result.message).toMatch(/size 3 → 21 bytes, lines 1 → 2/);
      }
      expect((await bytesOf(ws, 'shared.md')).toString()).toBe('v1\norchestrator line\n');
      await call('read_file', { path: 'shared.md' });
      expect((await call('edit_file', { path: 'shared.md', old_string: 'v1', new_string: 'v2' })).success).toBe(true);
      // Its own writes count as seen: a second edit goes through.
      expect((await call('edit_file', { path: 'shared.md', old_string: 'v2', new_string: 'v3' })).success).toBe(true);
      expect((await call('write_file', { path: 'shared.md', content: 'final\n' })).success).toBe(true);
    });

    it('refuses a write when the file changes after the stale check read it (the write carries ifVersion)', async () => {
      const ws = open();
      await ws.write('race.md', 'v1\n');
      // The other writer lands between the tool's read of the current bytes and its write.
      let interfere = false;
      const readBytes: SnapshotableWorkspace['readBytes'] = async (...args) => {
        const result = await ws.readBytes(...args);
        if (interfere) await ws.write('race.md', 'v1\nother writer\n');
        return result;
      };
      const racing = new Proxy(ws, {
        get: (target, key) => (key === 'readBytes' ? readBytes : bound(target, key)),
      });
      const call = toolCaller(racing);
      await call('read_file', { path: 'race.md' });
      interfere = true;
      for (const attempt of [
        () => call('edit_file', { path: 'race.md', old_string: 'v1', new_string: 'v2' }),
        () => call('write_file', { path: 'race.md', content: 'model\n' }),
      ]) {
        const result = await attempt();
        expect(codeOf(result)).toBe('ECONFLICT');
        expect(result.value).toMatchObject({ reason: 'stale' });
        expect(result.message).toContain('changed while this call ran');
        expect((await bytesOf(ws, 'race.md')).toString()).toBe('v1\nother writer\n');
        interfere = false;
        await call('read_file', { path: 'race.md' });
        interfere = true;
      }
    });

    it('staleWriteGuard: false lets a stale write through', async () => {
      const ws = open();
      await ws.write('shared.md', 'v1\n');
      const call = toolCaller(ws, { staleWriteGuard: false });
      await call('read_file', { path: 'shared.md' });
      await ws.write('shared.md', 'changed\n');
      expect((await call('write_file', { path: 'shared.md', content: 'model\n' })).success).toBe(true);
    });

    it('names the closest region and a short diff when old_string is not found', async () => {
      const ws = open();
      await ws.write('calc.ts', 'function add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n');
      const result = await toolCaller(ws)('edit_file', {
        path: 'calc.ts',
        old_string: 'function sub(a, c) {\n  return a - c;\n}',
        new_string: 'x',
      });
      expect(codeOf(result)).toBe('EINVAL');
      expect(result.message).toMatch(/closest text is at lines 5-7 \(\d+% similar\)/);
      expect(result.message).toContain('-function sub(a, c) {');
      expect(result.message).toContain('+function sub(a, b) {');
    });
  });
}

describe('stale writes on the host backend: another program changes the file', () => {
  it('refuses the edit with ECONFLICT after an outside write between read and edit', async () => {
    const ws = createWorkspace(hostDriver());
    try {
      await ws.write('config.ini', '[main]\nkey=1\n');
      const call = toolCaller(ws);
      await call('read_file', { path: 'config.ini' });
      writeFileSync(join(ws.root, 'config.ini'), '[main]\nkey=2\n'); // same size: only the content tells
      const edit = await call('edit_file', { path: 'config.ini', old_string: 'key=1', new_string: 'key=3' });
      expect(codeOf(edit)).toBe('ECONFLICT');
      expect(edit.message).toContain('same size and line count');
    } finally {
      await ws.dispose();
    }
  });
});
