import { lazyRequire } from '../workspace/lazy-require.js';

const diff = lazyRequire<typeof import('diff')>('diff');

/**
 * For each line of `after`, the index of the line of `before` it is (an unchanged line), or -1 (a line the
 * change wrote). The lines both share at their start and end are matched first, so an edit in a large file
 * costs what the edited region costs; the rest by the `diff` package's Myers diff.
 */
export function matchLines(before: readonly string[], after: readonly string[]): number[] {
  const matched = new Array<number>(after.length).fill(-1);
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
  let oldIndex = start;
  let newIndex = start;
  for (const part of diff().diffArrays(before.slice(start, endBefore), after.slice(start, endAfter))) {
    const count = part.count ?? part.value.length;
    if (part.added) newIndex += count;
    else if (part.removed) oldIndex += count;
    else {
      for (let offset = 0; offset < count; offset += 1) matched[newIndex + offset] = oldIndex + offset;
      oldIndex += count;
      newIndex += count;
    }
  }
  return matched;
}

/** A text's lines as `read` counts them: split on `\n`, a `\r` kept, no empty line after a final newline. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
