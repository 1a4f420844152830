/** UTF-8 and line-window logic shared by every backend's `read` and `grep`. */

const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Decodes UTF-8 exactly (a BOM is kept as U+FEFF); `undefined` when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * Splits text into lines on `\n`, keeping `\r`. The empty remainder after a final newline is not a line:
 * `"a\nb\n"` and `"a\nb"` both have two lines, `""` has none.
 */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export interface LineWindow {
  content: string;
  totalLines: number;
  offset: number;
  limit: number;
  truncated: boolean;
}

/** The `[offset, offset + limit)` window of `text`'s lines; `limit` -1 means to the end. */
export function lineWindow(text: string, offset: number, limit: number): LineWindow {
  const lines = splitLines(text);
  const end = limit === -1 ? lines.length : Math.min(lines.length, offset + limit);
  const window = offset >= lines.length ? [] : lines.slice(offset, end);
  return {
    content: window.join('\n'),
    totalLines: lines.length,
    offset,
    limit: window.length,
    truncated: offset + window.length < lines.length,
  };
}
