import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { DEFAULT_LIMITS } from '../../src/workspace/limits.js';
import { fitsLimits, normalizePath } from '../../src/workspace/paths.js';

/** Normalisation by its definition: split on `/`, drop empty and `.` segments, apply `..` (never above the root). */
function reference(input: string): string {
  const segments: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) return 'ESCAPE';
      segments.pop();
    } else segments.push(segment);
  }
  return segments.join('/');
}

describe('paths', () => {
  it('normalise as split, resolve and join would, already-normal ones included', () => {
    const part = fc.constantFrom('', '.', '..', 'a', '.a', 'a.', '..b', 'b..', '...', 'x.y');
    fc.assert(
      fc.property(fc.array(fc.tuple(part, fc.constantFrom('/', '//', '')), { maxLength: 6 }), (parts) => {
        const input = parts.map(([name, slash]) => name + slash).join('');
        let got: string;
        try {
          got = normalizePath(input);
        } catch (error) {
          got = (error as { name: string }).name === 'PathEscapeError' ? 'ESCAPE' : String(error);
        }
        expect(got).toBe(reference(input));
      }),
      { numRuns: 3000 },
    );
  });

  it('refuse a control character (C0, DEL, C1) or a backslash anywhere, in an otherwise normal path too', () => {
    const refused = fc.constantFrom('\u0000', '\u001f', '\u007f', '\u0080', '\u009f', '\\');
    const part = fc.constantFrom('', 'a', '.', '..', 'x.y', '\u00a0', 'é');
    fc.assert(
      fc.property(fc.array(part, { maxLength: 4 }), refused, fc.array(part, { maxLength: 4 }), (before, bad, after) => {
        const input = `${before.join('/')}${bad}${after.join('/')}`;
        expect(() => normalizePath(input)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
      }),
      { numRuns: 2000 },
    );
  });

  it('count segment lengths in code points, a long UTF-16 segment included, and depth in segments', async () => {
    const limits = { ...DEFAULT_LIMITS, maxPathDepth: 3, maxSegmentLength: 4 };
    expect(fitsLimits('😀😀😀😀', limits)).toBe(true);
    expect(fitsLimits('😀😀😀😀😀', limits)).toBe(false);
    expect(fitsLimits('a/b/😀😀😀😀', limits)).toBe(true);
    expect(fitsLimits('a/b/c/d', limits)).toBe(false);
    const ws = createWorkspace(memoryDriver(), { limits: { maxPathDepth: 3, maxSegmentLength: 4 } });
    await ws.write('ab/😀😀😀😀', 'fits');
    await expect(ws.write('ab/😀😀😀😀😀', 'x')).rejects.toMatchObject({
      code: 'EFBIG',
      message: 'path segment is too long: 5 characters, the limit is 4: ab/😀😀😀😀😀',
    });
    await expect(ws.mkdir('a/b/c/d', { parents: true })).rejects.toMatchObject({
      code: 'EFBIG',
      message: 'path is too deep: 4 segments, the limit is 3: a/b/c/d',
    });
  });
});
