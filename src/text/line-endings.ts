/** A file's line-ending style: `none` when it has no line break at all. */
export type LineEndingStyle = 'LF' | 'CRLF' | 'mixed' | 'none';

export interface LineEndingCounts {
  crlf: number;
  lf: number;
}

export function countLineEndings(text: string): LineEndingCounts {
  let crlf = 0;
  let lf = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    if (at > 0 && text.charCodeAt(at - 1) === 13) crlf += 1;
    else lf += 1;
  }
  return { crlf, lf };
}

export function lineEndingStyle(text: string): LineEndingStyle {
  // Most files hold no CR at all: one native search settles it.
  if (!text.includes('\r')) return text.includes('\n') ? 'LF' : 'none';
  const { crlf, lf } = countLineEndings(text);
  if (crlf === 0) return lf === 0 ? 'none' : 'LF';
  return lf === 0 ? 'CRLF' : 'mixed';
}

/** The break new lines take: CRLF when most of the file's breaks are CRLF (ties go to LF). */
export function majorityBreak(text: string): '\n' | '\r\n' {
  const { crlf, lf } = countLineEndings(text);
  return crlf > lf ? '\r\n' : '\n';
}

/** `text` with every CRLF as LF: what the model is shown and matches against. Lone CRs stay. */
export function toLF(text: string): string {
  return text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text;
}

/** `text` (any endings) with every line break written as `lineBreak`. */
export function withBreaks(text: string, lineBreak: '\n' | '\r\n'): string {
  const lf = toLF(text);
  return lineBreak === '\n' ? lf : lf.replace(/\n/g, '\r\n');
}

/**
 * Maps offsets in `toLF(text)` back to offsets in `text`. An offset at a `\n` that was a CRLF maps to its
 * `\r`, and an end offset just past that `\n` maps past the `\n`, so a range keeps whole line breaks.
 */
export class LfOffsetMap {
  /** The LF-form offsets of the `\n`s that were CRLF, ascending. */
  readonly #collapsed: number[] = [];

  constructor(text: string) {
    let removed = 0;
    for (let at = text.indexOf('\r\n'); at !== -1; at = text.indexOf('\r\n', at + 2)) {
      this.#collapsed.push(at - removed);
      removed += 1;
    }
  }

  toOriginal(offset: number): number {
    let low = 0;
    let high = this.#collapsed.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((this.#collapsed[middle] as number) < offset) low = middle + 1;
      else high = middle;
    }
    return offset + low;
  }
}

/** The style sentence `read_file` adds once, or nothing for plain LF / single-line files. */
export function describeLineEndings(style: LineEndingStyle): string | undefined {
  if (style === 'CRLF') return 'line endings: CRLF (shown without \\r; edits and writes keep them)';
  if (style === 'mixed') return 'line endings: mixed CRLF and LF (shown without \\r; edited lines keep theirs)';
  return undefined;
}
