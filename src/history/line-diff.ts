import { commonLines } from './myers.js';

/**
 * For each line of `after`, the index of the line of `before` it is (an unchanged line), or -1 (a line the
 * change wrote): a longest common subsequence of the two (a shortest edit script).
 */
export function matchLines(before: readonly string[], after: readonly string[]): number[] {
  const ids = new Map<string, number>();
  const intern = (lines: readonly string[]): Int32Array =>
    Int32Array.from(lines, (line) => {
      let id = ids.get(line);
      if (id === undefined) {
        id = ids.size;
        ids.set(line, id);
      }
      return id;
    });
  return Array.from(matchIds(intern(before), intern(after)));
}

/**
 * `matchLines` over lines given as ids (equal lines, equal ids; ids are small non-negative integers). Lines
 * only one side has cannot be kept: they are set aside before the diff, so a rewrite costs what its lines
 * in common cost.
 */
export function matchIds(before: Int32Array, after: Int32Array): Int32Array {
  const matched = new Int32Array(after.length).fill(-1);
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) {
    matched[start] = start;
    start += 1;
  }
  let endBefore = before.length;
  let endAfter = after.length;
  while (endBefore > start && endAfter > start && before[endBefore - 1] === after[endAfter - 1]) {
    endBefore -= 1;
    endAfter -= 1;
    matched[endAfter] = endBefore;
  }
  if (endBefore === start || endAfter === start) return matched;
  const a = shared(before, start, endBefore, after, start, endAfter);
  const b = shared(after, start, endAfter, before, start, endBefore);
  commonLines(a.ids, b.ids, (aIndex, bIndex) => {
    matched[b.indexes[bIndex] as number] = a.indexes[aIndex] as number;
  });
  return matched;
}

/** The lines of `lines[start, end)` that `other[otherStart, otherEnd)` also has, with their indexes. */
function shared(
  lines: Int32Array,
  start: number,
  end: number,
  other: Int32Array,
  otherStart: number,
  otherEnd: number,
): { ids: Int32Array; indexes: Int32Array } {
  const present = new Set<number>();
  for (let index = otherStart; index < otherEnd; index += 1) present.add(other[index] as number);
  const ids = new Int32Array(end - start);
  const indexes = new Int32Array(end - start);
  let count = 0;
  for (let index = start; index < end; index += 1) {
    const id = lines[index] as number;
    if (!present.has(id)) continue;
    ids[count] = id;
    indexes[count] = index;
    count += 1;
  }
  return { ids: ids.subarray(0, count), indexes: indexes.subarray(0, count) };
}

/** A text's lines as `read` counts them: split on `\n`, a `\r` kept, no empty line after a final newline. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
