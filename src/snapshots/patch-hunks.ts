import { lazyRequire } from '../workspace/lazy-require.js';

// Loaded on the first patch with text in it (see lazy-require.ts).
const diff = lazyRequire<typeof import('diff')>('diff');

/** Lines of context around each change, as `git diff` prints by default. */
const CONTEXT = 3;

/**
 * The unified hunks (three lines of context, git's range format) that turn the UTF-8 text `oldBytes` into
 * `newBytes`, computed by the `diff` package. Like git's xdiff (`xdl_trim_ends`), the lines both texts begin
 * and end with are set aside first (on the bytes: a newline byte is never part of another UTF-8 character),
 * keeping three of them on each side for context, so that an edit in a large file costs what the edited
 * region costs, not the whole file. The result is checked to have its full context at each cut; when it has
 * not (the library placed an edit among the kept lines, possible in a run of equal lines), the whole texts
 * are compared instead, so the hunks always apply where they say.
 */
export function textHunks(oldBytes: Uint8Array, newBytes: Uint8Array): string {
  const trimmed = trimCommonLines(oldBytes, newBytes);
  if (trimmed !== undefined) {
    const hunks = formatHunks(UTF8.decode(trimmed.old), UTF8.decode(trimmed.new), trimmed.skippedLines, trimmed.suffixTrimmed);
    if (hunks !== undefined) return hunks;
  }
  return formatHunks(UTF8.decode(oldBytes), UTF8.decode(newBytes), 0, false) as string;
}

const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });
const NEWLINE = 0x0a;

interface Trimmed {
  old: Uint8Array;
  new: Uint8Array;
  /** Whole lines left out before both (the same lines). */
  skippedLines: number;
  /** Whether whole lines were left out after them. */
  suffixTrimmed: boolean;
}

/** Both texts without the whole lines they share at the start and at the end, but for CONTEXT of each. */
export function trimCommonLines(a: Uint8Array, b: Uint8Array): Trimmed | undefined {
  const shorter = Math.min(a.length, b.length);
  const common = commonLength(a, b, shorter, false);
  // The start of the first line that differs, then CONTEXT lines back.
  let start = common === 0 ? 0 : a.lastIndexOf(NEWLINE, common - 1) + 1;
  const differs = start;
  for (let line = 0; line < CONTEXT && start > 0; line += 1) start = start < 2 ? 0 : a.lastIndexOf(NEWLINE, start - 2) + 1;
  // The common end, never reaching into the first line that differs.
  const tail = commonLength(a, b, shorter - differs, true);
  // The first whole line inside that common end, then CONTEXT lines forward.
  let end = a.length;
  const newline = tail === 0 ? -1 : a.indexOf(NEWLINE, a.length - tail);
  if (newline !== -1 && newline + 1 < a.length) {
    end = newline + 1;
    for (let line = 0; line < CONTEXT && end < a.length; line += 1) {
      const next = a.indexOf(NEWLINE, end);
      end = next === -1 ? a.length : next + 1;
    }
  }
  const suffix = a.length - end;
  if (start === 0 && suffix === 0) return undefined;
  let skippedLines = 0;
  for (let index = a.indexOf(NEWLINE); index !== -1 && index < start; index = a.indexOf(NEWLINE, index + 1)) skippedLines += 1;
  return { old: a.subarray(start, end), new: b.subarray(start, b.length - suffix), skippedLines, suffixTrimmed: suffix > 0 };
}

/** How many bytes (at most `limit`) `a` and `b` share at their start, or at their end with `fromEnd`. */
function commonLength(a: Uint8Array, b: Uint8Array, limit: number, fromEnd: boolean): number {
  const at = (bytes: Uint8Array, offset: number, length: number): Uint8Array =>
    fromEnd ? bytes.subarray(bytes.length - offset - length, bytes.length - offset) : bytes.subarray(offset, offset + length);
  let done = 0;
  // Whole blocks compared natively, then byte by byte.
  for (const block of [4096, 64]) {
    while (done + block <= limit && Buffer.compare(at(a, done, block), at(b, done, block)) === 0) done += block;
  }
  while (done < limit && a[fromEnd ? a.length - 1 - done : done] === b[fromEnd ? b.length - 1 - done : done]) done += 1;
  return done;
}

/**
 * The hunks of `oldText` → `newText` with line numbers moved down by `skippedLines`; undefined when lines
 * were left out around them and a hunk has less context than CONTEXT on that side.
 */
function formatHunks(oldText: string, newText: string, skippedLines: number, suffixTrimmed: boolean): string | undefined {
  const { hunks } = diff().structuredPatch('', '', oldText, newText, undefined, undefined, { context: CONTEXT });
  const first = hunks[0];
  const last = hunks.at(-1);
  if (first !== undefined && skippedLines > 0 && leadingContext(first.lines) < CONTEXT) return undefined;
  if (last !== undefined && suffixTrimmed && leadingContext(last.lines.filter((line) => !line.startsWith('\\')).reverse()) < CONTEXT)
    return undefined;
  let out = '';
  for (const hunk of hunks) {
    // Git's ranges: `start,count`, the count left out when it is 1, and an empty range starts one line earlier.
    const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`);
    out += `@@ -${range(hunk.oldStart + skippedLines, hunk.oldLines)} +${range(hunk.newStart + skippedLines, hunk.newLines)} @@\n`;
    for (const line of hunk.lines) out += `${line}\n`;
  }
  return out;
}

function leadingContext(lines: readonly string[]): number {
  let count = 0;
  while (count < lines.length && (lines[count] as string).startsWith(' ')) count += 1;
  return count;
}
