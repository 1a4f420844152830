import { decodeText, encodeText, isUtf8, type DecodedText, type TextEncodingInfo } from '../text/encoding.js';
import { describeLineEndings, lineEndingStyle, toLF, withBreaks, type LineEndingStyle } from '../text/line-endings.js';
import { preserveLineEndings } from '../text/edit.js';
import { InvalidContentError } from '../workspace/errors.js';
import type { Workspace, WriteMode } from '../workspace/types.js';

/** A text file as the tools handle it: bytes as stored, the decoded text, and what the model is shown. */
export interface TextFile {
  path: string;
  bytes: Uint8Array;
  decoded: DecodedText;
  /** The text without its BOM and with CRLF shown as LF. */
  shown: string;
  style: LineEndingStyle;
}

/** Reads and decodes a file (`encoding` overrides detection); binary content is `InvalidContentError`. */
export async function readTextFile(filesystem: Workspace, path: string, encoding?: string): Promise<TextFile> {
  const { path: shownPath, content } = await filesystem.readBytes(path);
  const file = asTextFile(shownPath, content, encoding);
  if (file === undefined) throw new InvalidContentError(shownPath);
  return file;
}

/** The text view of bytes read from `path`, or `undefined` when they are binary. */
export function asTextFile(path: string, bytes: Uint8Array, encoding?: string): TextFile | undefined {
  const decoded = decodeText(bytes, encoding);
  if (decoded === undefined) return undefined;
  return { path, bytes, decoded, shown: toLF(decoded.text), style: lineEndingStyle(decoded.text) };
}

/** How a write kept a file's storage, for the result message: `''` for plain UTF-8 with LF. */
export function keptFormat(file: TextFile | undefined, bytes: Uint8Array): string {
  if (file === undefined) return '';
  const kept: string[] = [];
  if (!isUtf8(file.decoded.encoding)) kept.push(file.decoded.encoding);
  if (file.decoded.bom) kept.push('BOM');
  if (file.style === 'CRLF' && bytes.includes(13)) kept.push('CRLF line endings');
  return kept.length === 0 ? '' : `; kept ${kept.join(', ')}`;
}

/** The sentences `read_file` adds once about how the file is stored, when it is not plain UTF-8 with LF. */
export function formatNotes(file: TextFile): string[] {
  const notes: string[] = [];
  if (!isUtf8(file.decoded.encoding) || file.decoded.bom)
    notes.push(
      `encoding: ${isUtf8(file.decoded.encoding) ? 'UTF-8' : file.decoded.encoding}${file.decoded.bom ? ' with BOM' : ''} (edits and writes keep it)`,
    );
  const endings = describeLineEndings(file.style);
  if (endings !== undefined) notes.push(endings);
  return notes;
}

/**
 * The bytes `write_file` stores: over an existing text file, in its encoding with its BOM, and with CRLF
 * kept when `preserve` says so and the content has no CR; a new file in `encoding` (default UTF-8).
 * A leading U+FEFF the model copied is not doubled. `append` encodes the addition alone (no BOM).
 */
export function encodeForWrite(
  content: string,
  existing: TextFile | undefined,
  options: { mode: WriteMode; preserve: boolean; encoding?: string; path: string },
): Uint8Array {
  const info: TextEncodingInfo = existing?.decoded ?? { encoding: options.encoding ?? 'utf-8', bom: false };
  let text = content.startsWith('\ufeff') && info.bom ? content.slice(1) : content;
  if (existing !== undefined && options.preserve) {
    text = options.mode === 'append' && !text.includes('\r') && existing.style === 'CRLF' ? withBreaks(text, '\r\n') : text;
    if (options.mode !== 'append') text = preserveLineEndings(existing.decoded.text, text);
  }
  return encodeText(text, options.mode === 'append' ? { ...info, bom: false } : info, options.path);
}
