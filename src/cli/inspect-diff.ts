import { matchLines } from '../history/line-diff.js';

/**
 * One row of a side-by-side diff: `same`, `mod` (a line replaced), `del` (left only), `add` (right only),
 * with 1-based line numbers (0 where a side has no line); `skip` stands for `left` unchanged lines left out.
 */
export type DiffRow =
  [kind: 'same' | 'mod' | 'del' | 'add', left: number, leftText: string, right: number, rightText: string] | ['skip', number];

/** Unchanged lines shown around each change. */
const CONTEXT = 3;

/** The rows of a side-by-side view of `before` → `after`: runs of removed and added lines paired as replaced lines. */
export function sideBySide(before: readonly string[], after: readonly string[]): DiffRow[] {
  const matched = matchLines(before, after);
  const rows: DiffRow[] = [];
  let removed: number[] = [];
  let added: number[] = [];
  const flush = (): void => {
    for (let index = 0; index < Math.max(removed.length, added.length); index += 1) {
      const left = removed[index];
      const right = added[index];
      const kind = left === undefined ? 'add' : right === undefined ? 'del' : 'mod';
      rows.push([
        kind,
        left === undefined ? 0 : left + 1,
        left === undefined ? '' : (before[left] ?? ''),
        right === undefined ? 0 : right + 1,
        right === undefined ? '' : (after[right] ?? ''),
      ]);
    }
    removed = [];
    added = [];
  };
  let next = 0;
  for (const [index, match] of matched.entries()) {
    if (match < 0) {
      added.push(index);
      continue;
    }
    for (; next < match; next += 1) removed.push(next);
    flush();
    rows.push(['same', match + 1, before[match] ?? '', index + 1, after[index] ?? '']);
    next = match + 1;
  }
  for (; next < before.length; next += 1) removed.push(next);
  flush();
  return collapse(rows);
}

/** Leaves out unchanged lines farther than `CONTEXT` from a change. */
function collapse(rows: DiffRow[]): DiffRow[] {
  const changed = rows.map((row) => row[0] !== 'same');
  const near = new Array<boolean>(rows.length).fill(false);
  for (const [index, isChange] of changed.entries())
    if (isChange) for (let at = Math.max(0, index - CONTEXT); at <= Math.min(rows.length - 1, index + CONTEXT); at += 1) near[at] = true;
  const out: DiffRow[] = [];
  for (const [index, row] of rows.entries()) {
    if (near[index]) out.push(row);
    else {
      const last = out.at(-1);
      if (last?.[0] === 'skip') last[1] += 1;
      else out.push(['skip', 1]);
    }
  }
  return out;
}
