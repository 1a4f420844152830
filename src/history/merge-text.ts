import { diff3Merge } from 'node-diff3';
import { decodeText, encodeText, isUtf8, type TextEncodingInfo } from '../text/encoding.js';
import { majorityBreak } from '../text/line-endings.js';

/** A part of a file both sides changed differently: each side's lines, with their line endings. */
export interface ConflictRegion {
  base: string;
  ours: string;
  theirs: string;
  /** 1-based line of `ours` where the region starts (the line after it, for an empty one). */
  startLine: number;
}

/** The labels of git's diff3-style conflict markers, as sessionfs writes them. */
export const MARKER_LABELS = { ours: 'ours', base: 'base', theirs: 'theirs' } as const;

export type TextMerge =
  | { kind: 'clean'; content: Uint8Array }
  | { kind: 'conflict'; regions: ConflictRegion[]; markers: Uint8Array }
  /** Not text on some side (or not in one encoding): merged only when one side kept the base's bytes. */
  | { kind: 'binary' };

/**
 * A line-wise three-way merge of a file's bytes (`base` undefined for a file both sides added), by diff3 as
 * git's merge does. Lines keep their own endings (CRLF, LF, mixed); the text is decoded and encoded again
 * in the files' encoding (UTF-8, or the legacy one detected, Latin-1 say), and a byte-order mark one side
 * added or removed is added or removed. A file with a NUL byte (git's test) or that decodes in no encoding
 * common to the three is binary.
 */
export function mergeText(base: Uint8Array | undefined, ours: Uint8Array, theirs: Uint8Array, path: string): TextMerge {
  const sides = decodeSides([base ?? new Uint8Array(0), ours, theirs]);
  if (sides === undefined) return { kind: 'binary' };
  const [b, o, t] = sides;
  // A mark one side changed is that side's; both changing it means both agree (it is a yes or no).
  const info: TextEncodingInfo = { encoding: o.encoding, bom: base === undefined || o.bom !== b.bom ? o.bom : t.bom };
  const regions: ConflictRegion[] = [];
  const merged: string[] = [];
  const marked: string[] = [];
  const eol = majorityBreak(o.text);
  const oursLines = splitLines(o.text);
  for (const region of diff3Merge(oursLines, splitLines(b.text), splitLines(t.text), { excludeFalseConflicts: true })) {
    if (region.ok !== undefined) {
      merged.push(...region.ok);
      marked.push(...region.ok);
      continue;
    }
    const conflict = region.conflict as NonNullable<typeof region.conflict>;
    regions.push({ base: conflict.o.join(''), ours: conflict.a.join(''), theirs: conflict.b.join(''), startLine: conflict.aIndex + 1 });
    marked.push(
      `<<<<<<< ${MARKER_LABELS.ours}${eol}`,
      ...terminated(conflict.a, eol),
      `||||||| ${MARKER_LABELS.base}${eol}`,
      ...terminated(conflict.o, eol),
      `=======${eol}`,
      ...terminated(conflict.b, eol),
      `>>>>>>> ${MARKER_LABELS.theirs}${eol}`,
    );
  }
  try {
    if (regions.length === 0) return { kind: 'clean', content: encodeText(merged.join(''), info, path) };
    return { kind: 'conflict', regions, markers: encodeText(marked.join(''), info, path) };
  } catch {
    // A character one side added that the encoding cannot hold: not mergeable as text.
    return { kind: 'binary' };
  }
}

/** Lines with their terminators; a last line without one stays as it is. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** A side's lines inside markers: its last line gets a break, so that the marker after it starts a line. */
function terminated(lines: string[], eol: string): string[] {
  const last = lines.at(-1);
  if (last === undefined || last.endsWith('\n')) return lines;
  return [...lines.slice(0, -1), last + eol];
}

interface Side {
  text: string;
  encoding: string;
  bom: boolean;
}

/**
 * The three texts in one encoding. Sides are detected one by one; plain ASCII fits any encoding, so the
 * others choose: all UTF-8, or one legacy encoding (the base's detection first, as chardet may name a
 * sibling, windows-1252 for ISO-8859-1, for a few changed bytes). UTF-8 on one side and a legacy encoding
 * on another is a conversion, not an edit: not mergeable line-wise.
 */
function decodeSides(bytes: [Uint8Array, Uint8Array, Uint8Array]): [Side, Side, Side] | undefined {
  if (bytes.some((side) => side.includes(0))) return undefined;
  const detected = bytes.map((side) => decodeText(side));
  if (detected.some((side) => side === undefined)) return undefined;
  const sides = detected as Side[];
  const legacy = sides.filter((side, index) => !isUtf8(side.encoding) && !isAscii(bytes[index] as Uint8Array));
  if (legacy.length === 0) return sides.every((side) => isUtf8(side.encoding)) ? (sides as [Side, Side, Side]) : undefined;
  if (sides.some((side, index) => isUtf8(side.encoding) && !isAscii(bytes[index] as Uint8Array))) return undefined;
  const encoding = (legacy[0] as Side).encoding;
  const again = bytes.map((side) => decodeText(side, encoding));
  return again.every((side) => side !== undefined) ? (again as [Side, Side, Side]) : undefined;
}

function isAscii(bytes: Uint8Array): boolean {
  for (const byte of bytes) if (byte > 0x7f) return false;
  return true;
}
