import { InvalidArgumentError, InvalidContentError } from './errors.js';
import { nonNegativeInteger } from './limits.js';
import { displayPath, type NormalizedPath } from './paths.js';
import { decodeUtf8, lineWindow } from './text.js';
import type { ReadBytesOptions, ReadBytesResult, ReadOptions, ReadResult } from './types.js';

/** The lines a `read` asks for, checked before anything is read (`EINVAL`). */
export function lineRange(options: ReadOptions): { offset: number; limit: number } {
  const offset = nonNegativeInteger(options.offset ?? 0, 'offset');
  const limit = options.limit ?? 2000;
  if (!Number.isSafeInteger(limit) || limit < -1) {
    throw new InvalidArgumentError(`limit must be a whole number of lines (or -1 for all), got ${String(limit)}`);
  }
  return { offset, limit };
}

/** A `read`'s result: the file's text (`EILSEQ` when it is not UTF-8), those lines of it. */
export function textResult(target: NormalizedPath, content: Uint8Array, { offset, limit }: { offset: number; limit: number }): ReadResult {
  const text = decodeUtf8(content);
  if (text === undefined) throw new InvalidContentError(displayPath(target));
  return { path: displayPath(target), ...lineWindow(text, offset, limit) };
}

/** The bytes a `readBytes` asks for (`EINVAL` when the numbers are not whole and non-negative). */
export function byteRange(options: ReadBytesOptions): { offset: number; length?: number } {
  const offset = nonNegativeInteger(options.offset ?? 0, 'offset');
  return options.limit === undefined ? { offset } : { offset, length: nonNegativeInteger(options.limit, 'limit') };
}

/** A `readBytes` result: the bytes read from `offset`, and whether the file goes on after them. */
export function bytesResult(target: NormalizedPath, offset: number, content: Uint8Array, sizeBytes: number): ReadBytesResult {
  return {
    path: displayPath(target),
    content,
    sizeBytes,
    offset,
    limit: content.byteLength,
    truncated: offset + content.byteLength < sizeBytes,
  };
}
