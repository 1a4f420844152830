import { LfOffsetMap, lineEndingStyle, majorityBreak, toLF, withBreaks } from './line-endings.js';
import { findNearMiss, type NearMiss } from './near-miss.js';

/** One exact replacement, as `edit_file` takes it. */
export interface TextEdit {
  oldString: string;
  newString: string;
  replaceAll?: boolean;
}

export type EditOutcome =
  | { ok: true; text: string; replacements: number[]; firstLines: number[] }
  | { ok: false; reason: 'no_match'; index: number; nearMiss?: NearMiss }
  | { ok: false; reason: 'ambiguous'; index: number; count: number; lines: number[] };

/**
 * Applies `edits` one after another to `text` (as stored: BOM removed, endings as on disk), all or nothing.
 * Matching ignores line-ending style on both sides (and a leading BOM in `oldString`); each replacement is
 * written with the file's line breaks (a mixed file: the majority's), and breaks outside the replaced range
 * are untouched. Line numbers in the outcome are 1-based, in the text each edit was applied to.
 */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): EditOutcome {
  let current = text;
  const replacements: number[] = [];
  const firstLines: number[] = [];
  for (const [index, edit] of edits.entries()) {
    const lf = toLF(current);
    const needle = toLF(stripBom(edit.oldString));
    const positions = occurrences(lf, needle);
    if (positions.length === 0) return { ok: false, reason: 'no_match', index, nearMiss: findNearMiss(lf, needle) };
    if (positions.length > 1 && edit.replaceAll !== true) {
      const lines = [...new Set(positions.map((position) => lineAt(lf, position)))];
      return { ok: false, reason: 'ambiguous', index, count: positions.length, lines };
    }
    const replacement = withBreaks(edit.newString, breakFor(current, edit.newString));
    const map = new LfOffsetMap(current);
    let next = '';
    let copied = 0;
    for (const position of positions) {
      next += current.slice(copied, map.toOriginal(position)) + replacement;
      copied = map.toOriginal(position + needle.length);
    }
    current = next + current.slice(copied);
    replacements.push(positions.length);
    firstLines.push(lineAt(lf, positions[0] as number));
  }
  return { ok: true, text: current, replacements, firstLines };
}

/**
 * The content `write_file` stores over an existing file: when the file's breaks are CRLF (or mostly
 * CRLF) and the new content has no CR at all, its LFs become CRLF. Anything else is written as given.
 */
export function preserveLineEndings(existing: string, content: string): string {
  if (content.includes('\r') || !content.includes('\n')) return content;
  return majorityBreak(existing) === '\r\n' ? withBreaks(content, '\r\n') : content;
}

/** 1-based line of `index` in `text`. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

/** A file without breaks takes the new text's own style; otherwise the file's (majority) style. */
function breakFor(file: string, inserted: string): '\n' | '\r\n' {
  const style = lineEndingStyle(file);
  if (style === 'none') return majorityBreak(inserted);
  return style === 'CRLF' ? '\r\n' : style === 'LF' ? '\n' : majorityBreak(file);
}

function stripBom(text: string): string {
  return text.startsWith('\ufeff') ? text.slice(1) : text;
}

/** Start indices of non-overlapping occurrences. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  if (needle === '') return found;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}
