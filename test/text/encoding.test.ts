import { createRequire } from 'node:module';
import iconv from 'iconv-lite';
import { describe, expect, it, vi } from 'vitest';
import { decodeText, encodeText } from '../../src/text/encoding.js';

const bytes = (text: string, encoding: string, addBOM = false): Uint8Array => new Uint8Array(iconv.encode(text, encoding, { addBOM }));
const FRENCH = "Le cœur a ses raisons que la raison ne connaît point.\nÉlève, déjà à l'été, garçon.\n".replace('œ', 'oe');

describe('decodeText', () => {
  it('reads UTF-8 as is and strips (but remembers) a UTF-8 BOM', () => {
    expect(decodeText(bytes('héllo\n', 'utf-8'))).toEqual({ text: 'héllo\n', encoding: 'utf-8', bom: false });
    expect(decodeText(bytes('héllo\n', 'utf-8', true))).toEqual({ text: 'héllo\n', encoding: 'utf-8', bom: true });
  });

  it('reads UTF-16 LE and BE files that start with a BOM', () => {
    expect(decodeText(bytes('añb\r\n', 'utf-16le', true))).toEqual({ text: 'añb\r\n', encoding: 'UTF-16LE', bom: true });
    expect(decodeText(bytes('añb\n', 'utf-16be', true))).toEqual({ text: 'añb\n', encoding: 'UTF-16BE', bom: true });
  });

  it.each([
    ['ISO-8859-1', FRENCH.repeat(3), 'latin1'],
    ['windows-1252', '“Quoted” text — with an em dash and € price: 12 €. Café crème.\n'.repeat(3), 'windows-1252'],
    ['Shift_JIS', '日本語のテキストです。ファイルの文字コードはシフトJISです。\nこんにちは世界\n', 'Shift_JIS'],
  ])('detects %s and decodes it exactly', (name, text, encoding) => {
    const decoded = decodeText(bytes(text, encoding));
    expect(decoded?.text).toBe(text);
    expect(decoded?.encoding).toBe(name);
    expect(decoded?.bom).toBe(false);
  });

  it('reads a short Latin-1 file that chardet gives up on through the windows-1252 fallback', () => {
    expect(decodeText(bytes('café\n', 'latin1'))).toEqual({ text: 'café\n', encoding: 'windows-1252', bom: false });
  });

  it('keeps binaries binary: NUL bytes and control characters are not text', () => {
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0xff, 0xd8]);
    expect(decodeText(png)).toBeUndefined();
    expect(decodeText(Uint8Array.from([0xe9, 0x01, 0x02, 0x03]))).toBeUndefined();
  });

  it('decodes with an explicit encoding, and refuses an unknown label with EINVAL', () => {
    expect(decodeText(bytes('Grüße', 'latin1'), 'latin1')?.text).toBe('Grüße');
    expect(() => decodeText(bytes('x', 'utf-8'), 'klingon-8')).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
  it('detects the encoding of the same bytes once (a file read window by window), and of new bytes again', () => {
    const chardet = createRequire(import.meta.url)('chardet') as { analyse: (bytes: Uint8Array) => unknown };
    const analyse = vi.spyOn(chardet, 'analyse');
    try {
      const latin = bytes(`${FRENCH.repeat(40)}detected once\n`, 'latin1');
      const first = decodeText(latin);
      expect(decodeText(latin)).toEqual(first);
      expect(first?.text).toContain('Élève');
      expect(analyse).toHaveBeenCalledTimes(1);
      const binary = new Uint8Array([0x80, 0x01, 0x02, 0xff, 0x03]);
      expect(decodeText(binary)).toBeUndefined();
      expect(decodeText(binary)).toBeUndefined();
      expect(decodeText(bytes(`${FRENCH}another file\n`, 'latin1'))?.text).toContain('another file');
      expect(analyse).toHaveBeenCalledTimes(3);
    } finally {
      analyse.mockRestore();
    }
  });
});

describe('encodeText', () => {
  it('writes text back in its own encoding, BOM included, byte for byte', () => {
    for (const [text, encoding, bom] of [
      [FRENCH, 'ISO-8859-1', false],
      ['añb\r\n', 'UTF-16LE', true],
      ['añb\n', 'UTF-16BE', true],
      ['日本語\n', 'Shift_JIS', false],
      ['plain\n', 'utf-8', true],
    ] as const) {
      const original = bytes(text, encoding, bom);
      const decoded = decodeText(original, encoding === 'utf-8' ? undefined : encoding);
      expect(decoded).toBeDefined();
      expect(encodeText(decoded!.text, decoded!, 'f.txt')).toEqual(original);
    }
  });

  it('refuses a character the encoding cannot hold with EILSEQ naming it and its line', () => {
    expect(() => encodeText('ok\nprice: 5 €\n', { encoding: 'ISO-8859-1', bom: false }, 'notes.txt')).toThrow(
      expect.objectContaining({
        code: 'EILSEQ',
        message: expect.stringMatching(/'€' \(U\+20AC\) on line 2 cannot be written in ISO-8859-1/),
      }),
    );
  });
});
