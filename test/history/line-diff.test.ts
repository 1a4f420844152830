import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchIds, matchLines, splitLines } from '../../src/history/line-diff.js';
import { LineTable } from '../../src/history/line-table.js';
import { createSession } from '../../src/session/index.js';
import { workspaceTools } from '../../src/shell/index.js';

/** The length of a longest common subsequence, by the textbook table. */
function lcsLength(a: readonly number[], b: readonly number[]): number {
  let row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const next = [0];
    for (let j = 0; j < b.length; j += 1)
      next.push(x === b[j] ? (row[j] as number) + 1 : Math.max(row[j + 1] as number, next[j] as number));
    row = next;
  }
  return row[b.length] as number;
}

// Few distinct lines, so that many are repeated and the diff has choices to make.
const lineIds = fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 40 });

describe('matchIds', () => {
  it('keeps a longest common subsequence: equal lines, in order, as many as the textbook table finds', () => {
    fc.assert(
      fc.property(lineIds, lineIds, (before, after) => {
        const matched = Array.from(matchIds(Int32Array.from(before), Int32Array.from(after)));
        const kept = matched.map((index, line) => [index, line] as const).filter(([index]) => index >= 0);
        for (const [index, line] of kept) expect(before[index]).toBe(after[line]);
        for (let i = 1; i < kept.length; i += 1) expect(kept[i]![0]).toBeGreaterThan(kept[i - 1]![0]);
        expect(kept.length).toBe(lcsLength(before, after));
      }),
      { numRuns: 2000 },
    );
  });

  it('a rewrite that shares no line keeps none, and costs no diff', () => {
    const before = Int32Array.from({ length: 50_000 }, (_, i) => i);
    const after = Int32Array.from({ length: 50_000 }, (_, i) => 50_000 + i);
    const start = performance.now();
    expect(matchIds(before, after).every((index) => index === -1)).toBe(true);
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('matchLines over strings matches the same lines', () => {
    expect(matchLines(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd', 'e'])).toEqual([0, -1, 2, 3, -1]);
  });
});

// Lines from a small alphabet (multi-byte characters, `\r`, empty lines), with or without a final newline.
const text = fc
  .tuple(fc.array(fc.constantFrom('', 'a', 'b', 'é', '🙂x', 'a\r', 'line'), { maxLength: 12 }), fc.boolean())
  .map(([lines, newline]) => lines.join('\n') + (newline && lines.length > 0 ? '\n' : ''));

describe('LineTable', () => {
  it('splits a version read after another as splitLines does, reusing the lines both share', () => {
    fc.assert(
      fc.property(text, text, text, (first, second, third) => {
        const table = new LineTable();
        const one = table.lines(Buffer.from(first));
        const two = table.lines(Buffer.from(second), one);
        const three = table.lines(new TextEncoder().encode(third), two);
        for (const [version, source] of [
          [one, first],
          [two, second],
          [three, third],
        ] as const) {
          expect(Array.from(version.ids, (id) => table.text(id))).toEqual(splitLines(source));
          const bytes = Buffer.from(source);
          const starts = splitLines(source).map(
            (_, index) => Buffer.byteLength(splitLines(source).slice(0, index).join('\n')) + (index > 0 ? 1 : 0),
          );
          expect(Array.from(version.starts)).toEqual(starts);
          expect(version.bytes.equals(bytes)).toBe(true);
        }
        for (const [version, like] of [
          [two, one],
          [three, two],
        ] as const) {
          const { head, tail } = version;
          expect(head + tail).toBeLessThanOrEqual(Math.min(version.ids.length, like.ids.length));
          expect(Array.from(version.ids.subarray(0, head))).toEqual(Array.from(like.ids.subarray(0, head)));
          expect(Array.from(version.ids.subarray(version.ids.length - tail))).toEqual(
            Array.from(like.ids.subarray(like.ids.length - tail)),
          );
        }
      }),
      { numRuns: 3000 },
    );
  });
});

const writeFile = workspaceTools().find((tool) => tool.name === 'write_file')!;

/** An edit of a file made of unique lines: some removed at one place, fresh ones written there. */
const edit = fc.record({ at: fc.nat(), removed: fc.nat({ max: 4 }), added: fc.nat({ max: 4 }), newline: fc.boolean() });

describe('blame through random edits', () => {
  it('gives each line the call that wrote it (every line written once, so the answer is known)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 25 }), async (edits) => {
        await using session = await createSession({ backend: 'memory', retention: { maxSnapshots: 1000 } });
        let lines: string[] = [];
        const writer: string[] = [];
        for (const [call, { at, removed, added, newline }] of edits.entries()) {
          const position = lines.length === 0 ? 0 : at % (lines.length + 1);
          const fresh = Array.from({ length: added }, (_, n) => `call ${call} line ${n} é🙂`);
          lines = [...lines.slice(0, position), ...fresh, ...lines.slice(position + removed)];
          const content = lines.join('\n') + (newline && lines.length > 0 ? '\n' : '');
          const result = await session.runTool(writeFile, { path: 'f.txt', content });
          expect(result.success).toBe(true);
          writer.push((await session.history()).turns.flatMap((turn) => turn.operations).at(-1)!.id);
        }
        const blame = await session.blame('f.txt');
        expect(blame.lines.map((line) => line.text)).toEqual(lines);
        expect(blame.lines.map((line) => line.operationId)).toEqual(lines.map((line) => writer[Number(/^call (\d+)/.exec(line)![1])]));
      }),
      { numRuns: 40 },
    );
  });
});
