import { createHash } from 'node:crypto';
import { lazyRequire } from '../workspace/lazy-require.js';
import { InvalidArgumentError, InvalidContentError } from '../workspace/errors.js';
import { decodeUtf8, encodeUtf8 } from '../workspace/text.js';

/** Only files that are not UTF-8 need detection and transcoding. */
const chardet = lazyRequire<typeof import('chardet')>('chardet');
const iconv = lazyRequire<typeof import('iconv-lite')>('iconv-lite');

/** How a text file is stored on disk, so a rewrite can store it the same way. */
export interface TextEncodingInfo {
  /** `utf-8`, or the label a non-UTF-8 file was decoded with (`ISO-8859-1`, `UTF-16LE`, `Shift_JIS` …). */
  encoding: string;
  /** The file starts with a byte-order mark (never part of `text`). */
  bom: boolean;
}

export interface DecodedText extends TextEncodingInfo {
  /** The content without its byte-order mark, line endings as stored. */
  text: string;
}

const UTF8 = 'utf-8';
/** Detection reads at most this much of a file that is not UTF-8 (the contract's 64 KiB). */
const DETECTION_SAMPLE_BYTES = 64 * 1024;
/** Control characters that make decoded text binary: C0 but tab, LF, form feed and CR; DEL; C1. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const BINARY_CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f]/;
/**
 * Tried when chardet names nothing usable: it gives up on short files ("café" in Latin-1 comes back as
 * ASCII), and windows-1252 is the legacy encoding such files are most often in (a superset of Latin-1's
 * printable range). The control-character test still sends binaries to `EILSEQ`.
 */
const FALLBACK_ENCODING = 'windows-1252';

/**
 * Decodes a file the way the tools show it: UTF-8 (BOM stripped and remembered), UTF-16 with a BOM, or
 * the encoding `chardet` names when decoding with it yields no control characters but tab, LF, CR and form
 * feed. Anything else is binary: `undefined`. `encoding` overrides detection (any iconv-lite label).
 */
export function decodeText(bytes: Uint8Array, encoding?: string): DecodedText | undefined {
  if (encoding !== undefined) return decodeAs(bytes, checkedEncoding(encoding));
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) {
    const text = decodeUtf8(bytes.subarray(3));
    if (text !== undefined) return { text, encoding: UTF8, bom: true };
  }
  const utf8 = decodeUtf8(bytes);
  if (utf8 !== undefined) return { text: utf8, encoding: UTF8, bom: false };
  if (startsWith(bytes, [0xff, 0xfe])) return decodeAs(bytes, 'UTF-16LE');
  if (startsWith(bytes, [0xfe, 0xff])) return decodeAs(bytes, 'UTF-16BE');
  const key = createHash('sha1').update(bytes).digest('base64');
  const known = detections.get(key);
  if (known !== undefined) return known === BINARY ? undefined : decodeAs(bytes, known);
  for (const candidate of detectedEncodings(bytes)) {
    const decoded = decodeAs(bytes, candidate);
    if (decoded !== undefined && !BINARY_CONTROL.test(decoded.text)) {
      remember(key, candidate);
      return decoded;
    }
  }
  remember(key, BINARY);
  return undefined;
}

/**
 * The encoding detection chose for recent contents (by digest; `BINARY` for none): a model reading a
 * legacy-encoded file window by window ran chardet over the same 64 KiB each time (most of a 1 MiB Latin-1
 * read). The same bytes always detect the same, so this only saves time.
 */
const detections = new Map<string, string>();
const MAX_DETECTIONS = 256;
const BINARY = '';

function remember(key: string, encoding: string): void {
  if (detections.size >= MAX_DETECTIONS) detections.delete(detections.keys().next().value as string);
  detections.set(key, encoding);
}

/** chardet's candidates for a non-UTF-8 file, best first, that iconv-lite can decode; then the fallback. */
function detectedEncodings(bytes: Uint8Array): string[] {
  const names = chardet()
    .analyse(bytes.subarray(0, DETECTION_SAMPLE_BYTES))
    .map((match) => match.name);
  const usable = names.filter((name) => !/^(UTF|ASCII)/i.test(name) && iconv().encodingExists(name));
  return [...new Set([...usable.slice(0, 3), FALLBACK_ENCODING])];
}

/** Like `decodeText`, but binary content is an `InvalidContentError` (`EILSEQ`) naming `path`. */
export function decodeTextOrThrow(bytes: Uint8Array, path: string, encoding?: string): DecodedText {
  const decoded = decodeText(bytes, encoding);
  if (decoded === undefined) throw new InvalidContentError(path);
  return decoded;
}

/**
 * Encodes `text` in the file's own encoding, BOM included when it had one. A character the encoding
 * cannot hold is an `InvalidContentError` naming it and its line: nothing is ever written as `?` or U+FFFD.
 */
export function encodeText(text: string, info: TextEncodingInfo, path: string): Uint8Array {
  if (isUtf8(info.encoding)) {
    const body = encodeUtf8(text);
    if (!info.bom) return body;
    const withBom = new Uint8Array(body.length + 3);
    withBom.set([0xef, 0xbb, 0xbf]);
    withBom.set(body, 3);
    return withBom;
  }
  const encoding = checkedEncoding(info.encoding);
  const bytes = iconv().encode(text, encoding, { addBOM: info.bom });
  const back = iconv().decode(bytes, encoding, { stripBOM: true });
  if (back !== text) throw unencodable(text, back, info.encoding, path);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function isUtf8(encoding: string): boolean {
  return /^utf-?8$/i.test(encoding);
}

function decodeAs(bytes: Uint8Array, encoding: string): DecodedText | undefined {
  if (isUtf8(encoding)) {
    const bom = startsWith(bytes, [0xef, 0xbb, 0xbf]);
    const text = decodeUtf8(bom ? bytes.subarray(3) : bytes);
    return text === undefined ? undefined : { text, encoding: UTF8, bom };
  }
  const bom = hasBom(bytes, encoding);
  const text = iconv().decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), encoding, { stripBOM: true });
  // A decoder that had to invent characters read bytes that are not this encoding: not text in it.
  if (text.includes('\ufffd') && !bytesContainReplacement(bytes, encoding)) return undefined;
  return { text, encoding, bom };
}

function checkedEncoding(label: string): string {
  const shown = label.slice(0, 40);
  if (!iconv().encodingExists(label)) throw new InvalidArgumentError(`unknown encoding '${shown}'`);
  return label;
}

function hasBom(bytes: Uint8Array, encoding: string): boolean {
  const name = encoding.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (name === 'utf16le' || name === 'utf16' || name === 'ucs2') return startsWith(bytes, [0xff, 0xfe]);
  if (name === 'utf16be') return startsWith(bytes, [0xfe, 0xff]);
  return false;
}

/** True when U+FFFD is genuinely in the file (encoded in its own encoding), not a decoding failure. */
function bytesContainReplacement(bytes: Uint8Array, encoding: string): boolean {
  if (!iconv().encodingExists(encoding)) return false;
  const needle = iconv().encode('\ufffd', encoding);
  return needle.length > 0 && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(needle);
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

function unencodable(text: string, roundTrip: string, encoding: string, path: string): InvalidContentError {
  let index = 0;
  while (index < text.length && text[index] === roundTrip[index]) index += 1;
  const codePoint = text.codePointAt(index) ?? 0;
  const line = text.slice(0, index).split('\n').length;
  const character = `'${String.fromCodePoint(codePoint)}' (U+${codePoint.toString(16).toUpperCase().padStart(4, '0')})`;
  return new InvalidContentError(path, `${character} on line ${line} cannot be written in ${encoding}; nothing was written`);
}
