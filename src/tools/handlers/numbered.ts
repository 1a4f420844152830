import { splitLines } from '../../workspace/text.js';
import type { ResolvedToolsOptions } from '../options.js';
import { formatNotes, type TextFile } from '../text-file.js';
import { count, cutLine } from './shared.js';

/** Which lines to show: from `first` (1-based), at most `limit`; or the last `tail`. */
export interface WindowRequest {
  first?: number | undefined;
  limit?: number | undefined;
  tail?: number | undefined;
}

export interface WindowValue {
  path: string;
  totalLines: number;
  startLine: number;
  endLine: number;
  truncated: boolean;
  encoding?: string;
  lineEndings?: string;
}

/**
 * A text file as `read_file` and `read_many_files` show it: numbered lines of the requested window, cut
 * at `maxChars` characters (whole lines, at least one) and `maxLineChars` per line, then one note each on
 * the storage (encoding, line endings), where to read on, and cut lines.
 */
export function numberedWindow(
  file: TextFile,
  request: WindowRequest,
  limits: Pick<ResolvedToolsOptions, 'maxReadLines' | 'maxLineChars'>,
  maxChars: number,
): { text: string; value: WindowValue } {
  const all = splitLines(file.shown);
  const totalLines = all.length;
  const wanted = Math.min(request.tail ?? request.limit ?? limits.maxReadLines, limits.maxReadLines);
  const first = request.tail === undefined ? Math.max(1, request.first ?? 1) : Math.max(1, totalLines - request.tail + 1);
  const path = file.path;
  if (totalLines === 0)
    return { text: `${path} is empty (0 lines).`, value: { path, totalLines: 0, startLine: 1, endLine: 0, truncated: false } };
  if (first > totalLines) {
    return {
      text: `${path} has ${count(totalLines, 'line')}; offset ${first} is past the end. Read from offset 1 to see it.`,
      value: { path, totalLines, startLine: first, endLine: first - 1, truncated: false },
    };
  }
  const numbered: string[] = [];
  let chars = 0;
  let cutLines = 0;
  const last = Math.min(totalLines, first - 1 + wanted);
  for (let index = first - 1; index < last; index += 1) {
    const line = all[index] as string;
    const shown = cutLine(line, limits.maxLineChars);
    if (numbered.length > 0 && chars + shown.length > maxChars) break;
    if (shown !== line) cutLines += 1;
    chars += shown.length + 1;
    numbered.push(`${lineNumber(index + 1)}\t${shown}`);
  }
  const endLine = first + numbered.length - 1;
  const truncated = endLine < totalLines;
  const notes: string[] = formatNotes(file);
  if (truncated) {
    notes.push(
      `Showing lines ${first}-${endLine} of ${totalLines}. To read on, call read_file with path ${JSON.stringify(path)} and offset ${endLine + 1}.`,
    );
  } else if (first > 1) {
    notes.push(`Showing lines ${first}-${endLine} of ${totalLines} (end of file).`);
  }
  if (cutLines > 0)
    notes.push(
      `${count(cutLines, 'line')} longer than ${limits.maxLineChars} characters ${cutLines === 1 ? 'was' : 'were'} cut; use grep to find text in ${cutLines === 1 ? 'it' : 'them'}.`,
    );
  const text = numbered.join('\n') + (notes.length > 0 ? `\n\n${notes.join('\n')}` : '');
  return {
    text,
    value: { path, totalLines, startLine: first, endLine, truncated, encoding: file.decoded.encoding, lineEndings: file.style },
  };
}

const PADDING = '      ';

/** `n` right-aligned in six columns, as `String(n).padStart(6)` (a read numbers every line it shows). */
function lineNumber(n: number): string {
  const digits = String(n);
  return digits.length >= 6 ? digits : PADDING.slice(digits.length) + digits;
}
