import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyTextEdits, preserveLineEndings } from '../../src/text/edit.js';
import { LfOffsetMap, lineEndingStyle, toLF, withBreaks } from '../../src/text/line-endings.js';
import { findNearMiss, describeNearMiss } from '../../src/text/near-miss.js';

describe('line endings', () => {
  it('names the style of a file', () => {
    expect(lineEndingStyle('a\r\nb\r\n')).toBe('CRLF');
    expect(lineEndingStyle('a\nb\n')).toBe('LF');
    expect(lineEndingStyle('a\r\nb\n')).toBe('mixed');
    expect(lineEndingStyle('one line')).toBe('none');
  });

  it('maps LF-form offsets back so a range keeps whole CRLF breaks', () => {
    const text = 'ab\r\ncd\r\nef';
    const map = new LfOffsetMap(text);
    expect(map.toOriginal(2)).toBe(2); // at the break: the \r
    expect(map.toOriginal(3)).toBe(4); // past the break
    expect(map.toOriginal(toLF(text).length)).toBe(text.length);
  });
});

describe('applyTextEdits', () => {
  it('matches LF text in a CRLF file and writes the replacement with CRLF', () => {
    const outcome = applyTextEdits('one\r\ntwo\r\nthree\r\n', [{ oldString: 'two\nthree', newString: 'TWO\nTHREE\nFOUR' }]);
    expect(outcome).toMatchObject({ ok: true, text: 'one\r\nTWO\r\nTHREE\r\nFOUR\r\n', firstLines: [2] });
  });

  it('matches CRLF text in an LF file and writes LF', () => {
    const outcome = applyTextEdits('a\nb\nc\n', [{ oldString: 'a\r\nb', newString: 'x\r\ny' }]);
    expect(outcome).toMatchObject({ ok: true, text: 'x\ny\nc\n' });
  });

  it('keeps the breaks of untouched lines in a mixed file; new lines take the majority', () => {
    const outcome = applyTextEdits('a\r\nb\r\nc\nd\r\n', [{ oldString: 'c', newString: 'c1\nc2' }]);
    expect(outcome).toMatchObject({ ok: true, text: 'a\r\nb\r\nc1\r\nc2\nd\r\n' });
  });

  it('ignores a BOM the model copied into old_string', () => {
    expect(applyTextEdits('start\n', [{ oldString: '\ufeffstart', newString: 'begin' }])).toMatchObject({ ok: true, text: 'begin\n' });
  });

  it('applies several edits in order, all or nothing', () => {
    const text = 'alpha\r\nbeta\r\ngamma\r\n';
    expect(
      applyTextEdits(text, [
        { oldString: 'alpha', newString: 'ALPHA' },
        { oldString: 'ALPHA\nbeta', newString: 'AB' },
      ]),
    ).toMatchObject({ ok: true, text: 'AB\r\ngamma\r\n', replacements: [1, 1] });
    expect(
      applyTextEdits(text, [
        { oldString: 'alpha', newString: 'ALPHA' },
        { oldString: 'delta', newString: 'D' },
      ]),
    ).toMatchObject({ ok: false, reason: 'no_match', index: 1 });
  });

  it('reports ambiguity with the lines, and replaces every occurrence when asked', () => {
    expect(applyTextEdits('x\r\ny\r\nx\r\n', [{ oldString: 'x', newString: 'z' }])).toEqual({
      ok: false,
      reason: 'ambiguous',
      index: 0,
      count: 2,
      lines: [1, 3],
    });
    expect(applyTextEdits('x\r\ny\r\nx\r\n', [{ oldString: 'x\n', newString: 'z\n', replaceAll: true }])).toMatchObject({
      ok: true,
      text: 'z\r\ny\r\nz\r\n',
      replacements: [2],
    });
  });

  it('an edit through CRLF equals the same edit on the LF form, converted (property)', () => {
    const line = fc.stringMatching(/^[a-c ]{0,6}$/);
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 12 }),
        fc.nat(),
        fc.nat(),
        line,
        fc.constantFrom<'\n' | '\r\n'>('\n', '\r\n'),
        (lines, from, span, inserted, lineBreak) => {
          const lf = `${lines.join('\n')}\n`;
          const start = from % lines.length;
          const oldString = lines.slice(start, start + 1 + (span % 3)).join('\n');
          if (oldString === '' || oldString === inserted) return;
          const newString = `${inserted}\n${inserted}`;
          const onLf = applyTextEdits(lf, [{ oldString, newString, replaceAll: true }]);
          const onStyled = applyTextEdits(withBreaks(lf, lineBreak), [{ oldString, newString, replaceAll: true }]);
          expect(onStyled.ok).toBe(onLf.ok);
          if (onLf.ok && onStyled.ok) expect(onStyled.text).toBe(withBreaks(onLf.text, lineBreak));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('preserveLineEndings', () => {
  it('writes CRLF over a CRLF file when the content has no CR, and leaves other content alone', () => {
    expect(preserveLineEndings('a\r\nb\r\n', 'x\ny\n')).toBe('x\r\ny\r\n');
    expect(preserveLineEndings('a\r\nb\r\n', 'x\r\ny\n')).toBe('x\r\ny\n');
    expect(preserveLineEndings('a\nb\n', 'x\ny\n')).toBe('x\ny\n');
  });
});

describe('findNearMiss', () => {
  const file = 'function add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n';

  it('names the most similar region and shows a short diff', () => {
    const miss = findNearMiss(file, 'function sub(a, c) {\n  return a - c;\n}');
    expect(miss).toMatchObject({ startLine: 5, endLine: 7 });
    expect(miss!.similarity).toBeGreaterThan(0.8);
    expect(miss!.diff).toContain('-function sub(a, c) {');
    expect(miss!.diff).toContain('+function sub(a, b) {');
    expect(describeNearMiss(miss!)).toMatch(/lines 5-7 \(\d+% similar\)/);
  });

  it('says nothing when no region is at least 60% similar', () => {
    expect(findNearMiss(file, 'completely unrelated words here')).toBeUndefined();
  });
});
