import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { decodeText } from '../../src/text/encoding.js';
import { requiredLiteral, requiredLiterals } from '../../src/workspace/search/literal.js';
import type { GrepMatch, SnapshotableWorkspace } from '../../src/workspace/types.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { tempDirs } from '../../src/testing/harness.js';

/**
 * grep against the simplest implementation of its contract: decode each file as the tools do (`decodeText`:
 * UTF-8 without its BOM, else UTF-16 with a BOM or a detected legacy encoding; skip binaries), split on
 * `\n`, drop one trailing `\r`, first match per line, files in code-unit order, cut at `maxMatches`. Whatever the prefilter, the workers and the batching do, the results must be these.
 */
function reference(files: Map<string, Uint8Array>, pattern: string, ignoreCase: boolean, maxMatches: number): GrepMatch[] {
  const regex = new RegExp(pattern, ignoreCase ? 'iu' : 'u');
  const out: GrepMatch[] = [];
  for (const path of [...files.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const text = decodeText(files.get(path) as Uint8Array)?.text;
    if (text === undefined || text === '') continue;
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    for (const [index, raw] of lines.entries()) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      const match = regex.exec(line);
      if (match === null) continue;
      out.push({ path, lineNumber: index + 1, lineContent: line, matchStart: match.index, matchEnd: match.index + match[0].length });
      if (out.length >= maxMatches) return out;
    }
  }
  return out;
}

/** Pieces of text that make the tricky cases likely: CRLF, BOM, two-byte and astral characters, invalid bytes. */
const textPiece = fc.constantFrom(
  'a',
  'b',
  'A',
  'ab',
  'ba',
  'é',
  'É',
  '😀',
  'x',
  ' ',
  '.',
  '\n',
  '\r\n',
  '\r',
  '\uFEFF',
  'K',
  'ſ',
  'k',
  's',
  'S',
);
const fileBytes = fc.oneof(
  { weight: 5, arbitrary: fc.array(textPiece, { maxLength: 40 }).map((pieces) => new Uint8Array(Buffer.from(pieces.join('')))) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(textPiece, { maxLength: 10 }), fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0x00]))
      .map(([pieces, bad]) => new Uint8Array([...Buffer.from(pieces.join('')), ...bad, ...Buffer.from('ab\n')])),
  },
  {
    // Legacy encodings: single-byte (no BOM, detected) and UTF-16 with its BOM.
    weight: 2,
    arbitrary: fc
      .tuple(fc.array(textPiece, { maxLength: 30 }), fc.constantFrom('latin1', 'windows-1252', 'utf-16le', 'utf-16be'))
      .map(([pieces, encoding]) => new Uint8Array(iconv.encode(pieces.join(''), encoding, { addBOM: encoding.startsWith('utf-16') }))),
  },
);
/** Regex atoms (each valid on its own in u-mode, so any sequence compiles), with and without quantifiers. */
const atom = fc.constantFrom(
  'a',
  'b',
  'ab',
  'é',
  '😀',
  'k',
  's',
  '\\.',
  '.',
  'a*',
  'b+',
  'a?',
  'a{2}',
  'b{0,1}',
  '(a|b)',
  '[ab]',
  '[^a]',
  '\\w',
  '\\s',
  '\\bb',
  '^',
  '$',
  'x',
  '(?=a)',
  '(?<!b)a',
  'A',
);
const pattern = fc.oneof(
  { weight: 4, arbitrary: fc.array(atom, { minLength: 1, maxLength: 5 }).map((atoms) => atoms.join('')) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(atom, { minLength: 1, maxLength: 3 }), fc.array(atom, { minLength: 1, maxLength: 3 }))
      .map(([l, r]) => `${l.join('')}|${r.join('')}`),
  },
);
const tree = fc.uniqueArray(fc.tuple(fc.constantFrom('a.txt', 'b.txt', 'd/a.txt', 'd/e/x.txt', 'd-e.txt', 'É.txt', 'z/y.txt'), fileBytes), {
  selector: ([path]) => path,
  minLength: 1,
  maxLength: 6,
});

describe('grep equals a simple reference implementation', () => {
  const tempDir = tempDirs();

  const backends: Array<[string, () => SnapshotableWorkspace]> = [
    ['memory', () => createWorkspace(memoryDriver())],
    [
      'host',
      () => {
        const root = tempDir('sessionfs-grep-ref-');
        return createWorkspace(hostDriver({ root: join(root, 'ws'), gitDir: join(root, 'git') }));
      },
    ],
  ];

  for (const [name, create] of backends) {
    it(`on generated trees and patterns (${name})`, async () => {
      await fc.assert(
        fc.asyncProperty(tree, pattern, fc.boolean(), fc.constantFrom(1, 3, 1000), async (entries, source, ignoreCase, maxMatches) => {
          const ws = create();
          try {
            const files = new Map(entries.map(([path, bytes]) => [path, bytes]));
            for (const [path, bytes] of files) await ws.writeBytes(path, bytes);
            expect(await ws.grep(source, { ignoreCase, maxMatches })).toEqual(reference(files, source, ignoreCase, maxMatches));
          } finally {
            await ws.dispose();
          }
        }),
        { numRuns: name === 'host' ? 60 : 150 },
      );
    });
  }

  for (const [name, create] of backends) {
    it(`across the workers' batch boundaries, on a tree of many files and some large ones (${name})`, async () => {
      // Files go to the workers in batches of 256 files or 1 MiB: 700 files and four 400 KB ones cross
      // both kinds of boundary, and the limits below stop the search inside a batch and right at its edge.
      const files = new Map<string, Uint8Array>();
      const line = (i: number): string => ['needle at start', 'no match here', 'ends with needle', 'x needle y needle'][i % 4] as string;
      for (let i = 0; i < 700; i += 1) {
        const eol = i % 3 === 0 ? '\r\n' : '\n';
        const body = Array.from({ length: 1 + (i % 5) }, (_, n) => line(i + n)).join(eol);
        files.set(`d${i % 7}/f${String(i).padStart(3, '0')}.txt`, new Uint8Array(Buffer.from(i % 2 === 0 ? body : body + eol)));
      }
      for (let i = 0; i < 4; i += 1) {
        const filler = 'filler line without it\n'.repeat(17_000);
        files.set(`big/b${i}.txt`, new Uint8Array(Buffer.from(`needle first\n${filler}needle last`)));
      }
      const ws = create();
      try {
        for (const [path, bytes] of files) await ws.writeBytes(path, bytes);
        for (const source of ['needle', 'needle$', '^needle', 'h needle', 'e\\b']) {
          for (const maxMatches of [1, 255, 256, 257, 600, 100_000]) {
            const found = await ws.grep(source, { maxMatches });
            expect(found, `${source} ${maxMatches}`).toEqual(reference(files, source, false, maxMatches));
          }
        }
      } finally {
        await ws.dispose();
      }
    });
  }

  it('sees through links inside the root and never reads one leading out (host)', async () => {
    const root = tempDir('sessionfs-grep-links-');
    fs.mkdirSync(join(root, 'ws/real/sub'), { recursive: true });
    fs.writeFileSync(join(root, 'ws/real/in.txt'), 'needle inside\n');
    fs.writeFileSync(join(root, 'ws/real/sub/deep.txt'), 'needle deep\n');
    fs.writeFileSync(join(root, 'outside.txt'), 'needle outside\n');
    fs.symlinkSync('real', join(root, 'ws/dirlink'));
    fs.symlinkSync('real/in.txt', join(root, 'ws/filelink.txt'));
    fs.symlinkSync(join(root, 'outside.txt'), join(root, 'ws/out.txt'));
    fs.symlinkSync(root, join(root, 'ws/up'));
    const ws = createWorkspace(hostDriver({ root: join(root, 'ws'), gitDir: join(root, 'git') }));
    try {
      expect((await ws.grep('needle')).map((m) => m.path)).toEqual(['filelink.txt', 'real/in.txt', 'real/sub/deep.txt']);
      // A walk never enters a link, but a base may pass through one: its directories are pinned by their real path.
      expect((await ws.grep('needle', { path: 'dirlink/sub' })).map((m) => m.path)).toEqual(['dirlink/sub/deep.txt']);
      expect((await ws.grep('needle', { path: 'dirlink' })).map((m) => m.path)).toEqual([]);
      expect(await ws.grep('outside')).toEqual([]);
    } finally {
      await ws.dispose();
    }
  });
});

describe('requiredLiteral: the prefilter’s needle', () => {
  it.each([
    ['function\\s+\\w+Async', false, 'function'],
    ['TODO', false, 'TODO'],
    ['ab?c', false, 'a'],
    ['abc+d', false, 'abc'],
    ['a\\.b', false, 'a.b'],
    ['x(yz)+wv', false, 'wv'],
    ['[abc]def', false, 'def'],
    ['a|b', false, undefined],
    ['\\1', false, undefined],
    ['\\p{L}+foo', false, 'foo'],
    ['todo', true, undefined],
    ['to-do_42', true, '_42'],
    ['é😀', false, 'é😀'],
    ['a{0,3}bb', false, 'bb'],
  ])('%s (ignoreCase %s) → %s', (source, ignoreCase, expected) => {
    expect(requiredLiteral(source, ignoreCase)).toBe(expected);
  });

  it.each([
    ['function\\s+\\w+Async', ['function', 'Async']],
    ['\\bclass [A-Z]\\w*Error\\b', ['class ', 'Error']],
    ['TODO', ['TODO']],
    ['a|b', undefined],
  ])('requiredLiterals(%s) → %j, longest first', (source, expected) => {
    expect(requiredLiterals(source, false)).toEqual(expected);
  });

  it('gives literals every matching line contains, all of them', () => {
    fc.assert(
      fc.property(pattern, fc.boolean(), fc.array(textPiece, { maxLength: 30 }), (source, ignoreCase, pieces) => {
        const line = pieces.join('').replaceAll('\n', '');
        if (!new RegExp(source, ignoreCase ? 'iu' : 'u').test(line)) return;
        for (const literal of requiredLiterals(source, ignoreCase) ?? []) expect(line).toContain(literal);
      }),
    );
  });

  it('is a literal every matching line contains', () => {
    fc.assert(
      fc.property(pattern, fc.boolean(), fc.array(textPiece, { maxLength: 30 }), (source, ignoreCase, pieces) => {
        const needle = requiredLiteral(source, ignoreCase);
        const line = pieces.join('').replaceAll('\n', '');
        if (needle !== undefined && new RegExp(source, ignoreCase ? 'iu' : 'u').test(line)) expect(line).toContain(needle);
      }),
      { numRuns: 2000 },
    );
  });
});
