import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { mergeText } from '../../src/history/merge-text.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const latin1 = (text: string): Uint8Array => new Uint8Array(iconv.encode(text, 'latin1'));
const BOM = [0xef, 0xbb, 0xbf];
const withBom = (bytes: Uint8Array): Uint8Array => new Uint8Array([...BOM, ...bytes]);

/** What `git merge-file --diff3` makes of the same three files: its output and whether it conflicted. */
function gitMergeFile(base: Uint8Array, ours: Uint8Array, theirs: Uint8Array): { content: Uint8Array; conflicts: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'sessionfs-merge-file-'));
  try {
    const files = { ours, base, theirs };
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
    const run = spawnSync('git', ['merge-file', '--diff3', '-L', 'ours', '-L', 'base', '-L', 'theirs', 'ours', 'base', 'theirs'], {
      cwd: dir,
    });
    expect(run.status, String(run.stderr)).toBeGreaterThanOrEqual(0);
    return { content: new Uint8Array(readFileSync(join(dir, 'ours'))), conflicts: run.status !== 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Merges with sessionfs and with git, expects the same bytes, and returns sessionfs's result. */
function agreeWithGit(base: Uint8Array, ours: Uint8Array, theirs: Uint8Array): ReturnType<typeof mergeText> {
  const ours_ = mergeText(base, ours, theirs, 'f.txt');
  const git = gitMergeFile(base, ours, theirs);
  expect(ours_.kind).toBe(git.conflicts ? 'conflict' : 'clean');
  const content = ours_.kind === 'clean' ? ours_.content : ours_.kind === 'conflict' ? ours_.markers : undefined;
  expect(Buffer.from(content ?? []).toString('latin1')).toBe(Buffer.from(git.content).toString('latin1'));
  return ours_;
}

const lines = (count: number, edit: Record<number, string> = {}, eol = '\n'): string =>
  Array.from({ length: count }, (_, index) => `${edit[index + 1] ?? `line ${index + 1}`}${eol}`).join('');

describe('mergeText (line-wise three-way merge, as git merge-file)', () => {
  it('merges edits to different lines cleanly', () => {
    const result = agreeWithGit(utf8(lines(10)), utf8(lines(10, { 2: 'ours 2' })), utf8(lines(10, { 8: 'theirs 8' })));
    expect(result).toEqual({ kind: 'clean', content: utf8(lines(10, { 2: 'ours 2', 8: 'theirs 8' })) });
  });

  it('takes a change both sides made alike once', () => {
    agreeWithGit(utf8(lines(6)), utf8(lines(6, { 3: 'same' })), utf8(lines(6, { 3: 'same', 6: 'theirs 6' })));
  });

  it('reports overlapping edits as regions, and writes diff3-style markers as git does', () => {
    const result = agreeWithGit(utf8(lines(6)), utf8(lines(6, { 3: 'ours 3', 4: 'ours 4' })), utf8(lines(6, { 4: 'theirs 4' })));
    expect(result.kind === 'conflict' && result.regions).toEqual([
      { base: 'line 3\nline 4\n', ours: 'ours 3\nours 4\n', theirs: 'line 3\ntheirs 4\n', startLine: 3 },
    ]);
  });

  it('conflicts on adjacent edits as git does', () => {
    agreeWithGit(utf8(lines(6)), utf8(lines(6, { 3: 'ours 3' })), utf8(lines(6, { 4: 'theirs 4' })));
  });

  it('keeps CRLF line endings, and mixed ones line by line', () => {
    const result = agreeWithGit(
      utf8(lines(6, {}, '\r\n')),
      utf8(lines(6, { 1: 'ours 1' }, '\r\n')),
      utf8(lines(6, { 6: 'theirs 6' }, '\r\n')),
    );
    expect(result).toEqual({ kind: 'clean', content: utf8(lines(6, { 1: 'ours 1', 6: 'theirs 6' }, '\r\n')) });
    const mixed = 'a\r\nb\nc\r\nd\n';
    agreeWithGit(utf8(mixed), utf8(mixed.replace('a', 'A')), utf8(mixed.replace('d', 'D')));
    // Markers in a CRLF file end their lines with CRLF, as git's do.
    const conflict = agreeWithGit(
      utf8(lines(3, {}, '\r\n')),
      utf8(lines(3, { 2: 'ours' }, '\r\n')),
      utf8(lines(3, { 2: 'theirs' }, '\r\n')),
    );
    expect(conflict.kind).toBe('conflict');
  });

  it('keeps a byte-order mark, and takes the side that added or removed one', () => {
    const base = withBom(utf8(lines(4)));
    const clean = agreeWithGit(base, withBom(utf8(lines(4, { 1: 'ours' }))), withBom(utf8(lines(4, { 4: 'theirs' }))));
    expect(clean).toEqual({ kind: 'clean', content: withBom(utf8(lines(4, { 1: 'ours', 4: 'theirs' }))) });
    // Theirs dropped the mark while ours edited a line: the mark goes, the edit stays.
    expect(mergeText(base, withBom(utf8(lines(4, { 1: 'ours' }))), utf8(lines(4, { 4: 'theirs' })), 'f')).toEqual({
      kind: 'clean',
      content: utf8(lines(4, { 1: 'ours', 4: 'theirs' })),
    });
  });

  it('merges a Latin-1 file in Latin-1', () => {
    const result = agreeWithGit(
      latin1(lines(5, { 1: 'café' })),
      latin1(lines(5, { 1: 'café', 2: 'crème' })),
      latin1(lines(5, { 1: 'café', 5: 'brûlée' })),
    );
    expect(result).toEqual({ kind: 'clean', content: latin1(lines(5, { 1: 'café', 2: 'crème', 5: 'brûlée' })) });
    // From plain ASCII, each side adding its own Latin-1 line.
    expect(mergeText(utf8(lines(3)), latin1(lines(3, { 1: 'ça' })), utf8(lines(3, { 3: 'ok' })), 'f')).toEqual({
      kind: 'clean',
      content: latin1(lines(3, { 1: 'ça', 3: 'ok' })),
    });
  });

  it('keeps a last line without a newline, and ends conflict sides with one before a marker', () => {
    agreeWithGit(utf8('a\nb\nc'), utf8('A\nb\nc'), utf8('a\nb\nC'));
    agreeWithGit(utf8('a\nb\nc'), utf8('a\nb\nours'), utf8('a\nb\ntheirs'));
  });

  it('merges two additions against an empty base (add/add)', () => {
    const result = mergeText(undefined, utf8('one\n'), utf8('two\n'), 'f');
    expect(result.kind === 'conflict' && result.regions).toEqual([{ base: '', ours: 'one\n', theirs: 'two\n', startLine: 1 }]);
  });

  it('calls bytes with NUL binary, and a conversion between UTF-8 and Latin-1 not mergeable', () => {
    expect(mergeText(utf8('a\0b\n'), utf8('a\0c\n'), utf8('x\0b\n'), 'f')).toEqual({ kind: 'binary' });
    expect(mergeText(latin1('é\nb\n'), utf8('é\nb\n'), latin1('é\nB\n'), 'f')).toEqual({ kind: 'binary' });
  });
});
