import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { workspaces, type ComplianceHarness } from './harness.js';

const encoded = (text: string, encoding: string, addBOM = false): Uint8Array => new Uint8Array(iconv.encode(text, encoding, { addBOM }));
const utf8Bom = (text: string): Uint8Array => new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(text, 'utf8')]);

/** `grep` over files as editors and other systems store them: what it shows is the text, never the storage. */
export function searchText(harness: ComplianceHarness): void {
  describe('grep text fidelity', () => {
    const create = workspaces(harness);
    const lines = async (ws: SnapshotableWorkspace, pattern: string, options = {}): Promise<string[]> =>
      (await ws.grep(pattern, options)).map((m) => `${m.path}:${m.lineNumber}:${m.matchStart}-${m.matchEnd}:${m.lineContent}`);

    it('matches line 1 of a UTF-8 file with a BOM without the BOM, and never returns U+FEFF', async () => {
      const ws = await create();
      await ws.writeBytes('bom.txt', utf8Bom('hello world\r\nsecond hello\r\n'));
      // With a literal the worker prefilters on, and without one (the whole-file path).
      expect(await lines(ws, '^hello')).toEqual(['bom.txt:1:0-5:hello world']);
      expect(await lines(ws, '^[a-z]+ world$')).toEqual(['bom.txt:1:0-11:hello world']);
      expect(await lines(ws, '[a-z]+$')).toEqual(['bom.txt:1:6-11:hello world', 'bom.txt:2:7-12:second hello']);
      expect((await ws.grep('.')).every((m) => !m.lineContent.includes('\ufeff') && !m.lineContent.includes('\r'))).toBe(true);
    });

    it('matches CRLF and mixed lines without their \\r, with and without a prefilter literal', async () => {
      const ws = await create();
      await ws.write('mixed.txt', 'one\r\ntwo\nthree\r\n');
      expect(await lines(ws, 'three$')).toEqual(['mixed.txt:3:0-5:three']);
      expect(await lines(ws, '^[a-z]{3,5}$')).toEqual(['mixed.txt:1:0-3:one', 'mixed.txt:2:0-3:two', 'mixed.txt:3:0-5:three']);
    });

    it('searches UTF-16 LE and BE files with a BOM as text', async () => {
      const ws = await create();
      const text = 'première ligne\r\nthe second line\r\n';
      await ws.writeBytes('le.txt', encoded(text, 'utf-16le', true));
      await ws.writeBytes('be.txt', encoded(text, 'utf-16be', true));
      expect(await lines(ws, 'second')).toEqual(['be.txt:2:4-10:the second line', 'le.txt:2:4-10:the second line']);
      expect(await lines(ws, '^première')).toEqual(['be.txt:1:0-8:première ligne', 'le.txt:1:0-8:première ligne']);
      expect(await lines(ws, 'ligne$')).toEqual(['be.txt:1:9-14:première ligne', 'le.txt:1:9-14:première ligne']);
    });

    it('searches ISO-8859-1, Windows-1252 and Shift_JIS files in their decoded text', async () => {
      const ws = await create();
      // Long enough for chardet's statistics to tell French in Latin-1 from Romanian in Latin-2.
      const french = "Le café est prêt. Nous partirons à midi pour la fête au château; n'oubliez pas les crêpes.\nÀ bientôt, chère amie.\n";
      await ws.writeBytes('fr.txt', encoded(french, 'latin1'));
      await ws.writeBytes('quotes.txt', encoded('He said “hello” – twice, for €5.\n', 'windows-1252'));
      const japanese = 'これは日本語のテキストです。\n検索する行はここにあります。\n最後の行です。\n';
      await ws.writeBytes('ja.txt', encoded(japanese, 'shift_jis'));
      expect(await lines(ws, 'café')).toEqual([`fr.txt:1:3-7:${french.split('\n')[0]}`]);
      expect(await lines(ws, 'bient')).toEqual(['fr.txt:2:2-7:À bientôt, chère amie.']);
      expect(await lines(ws, '^À')).toEqual(['fr.txt:2:0-1:À bientôt, chère amie.']);
      expect(await lines(ws, '“\\w+”')).toEqual(['quotes.txt:1:8-15:He said “hello” – twice, for €5.']);
      expect(await lines(ws, '€\\d')).toEqual(['quotes.txt:1:29-31:He said “hello” – twice, for €5.']);
      expect(await lines(ws, '検索')).toEqual(['ja.txt:2:0-2:検索する行はここにあります。']);
      expect(await lines(ws, '行です')).toEqual(['ja.txt:3:3-6:最後の行です。']);
    });

    it('keeps skipping binaries, and cuts at maxMatches in path order across encodings', async () => {
      const ws = await create();
      await ws.writeBytes('a.bin', new Uint8Array([0x68, 0x69, 0x74, 0x00, 0xff, 0xfe, 0x01]));
      await ws.writeBytes('b.txt', encoded('hit é\nhit è\n', 'latin1'));
      await ws.write('c.txt', 'hit\nhit\n');
      await ws.writeBytes('d.txt', encoded('hit\n', 'utf-16le', true));
      expect(await lines(ws, 'hit')).toEqual([
        'b.txt:1:0-3:hit é',
        'b.txt:2:0-3:hit è',
        'c.txt:1:0-3:hit',
        'c.txt:2:0-3:hit',
        'd.txt:1:0-3:hit',
      ]);
      expect(await lines(ws, 'hit', { maxMatches: 3 })).toEqual(['b.txt:1:0-3:hit é', 'b.txt:2:0-3:hit è', 'c.txt:1:0-3:hit']);
      expect(await lines(ws, '^h.t', { maxMatches: 1 })).toEqual(['b.txt:1:0-3:hit é']);
    });
  });
}
