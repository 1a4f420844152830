/** A UTF-8 text's lines (as `splitLines` counts them), each as the id its `LineTable` gives equal lines. */
export interface Lines {
  readonly bytes: Buffer;
  /** Where each line starts in `bytes`. */
  readonly starts: Int32Array;
  readonly ids: Int32Array;
  /** How many lines it starts and ends with that the version it was read after (`like`) has there too. */
  readonly head: number;
  readonly tail: number;
}

const NEWLINE = 0x0a;
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Lines as ids, shared by the versions of the files one blame reads. A version read after a similar one
 * (`like`: the version before an edit) takes the ids of the lines both share at their start and end from
 * it, found by comparing bytes, and only decodes and looks up the lines between: an edit of a large file
 * costs what its region costs.
 */
export class LineTable {
  readonly #ids = new Map<string, number>();
  readonly #texts: string[] = [];

  text(id: number): string {
    return this.#texts[id] as string;
  }

  lines(content: Uint8Array, like?: Lines): Lines {
    const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
    // The body: the text without its final newline, lines being the body split on newlines.
    const end = bodyEnd(bytes);
    if (bytes.length === 0) return { bytes, starts: new Int32Array(0), ids: new Int32Array(0), head: 0, tail: 0 };
    if (like === undefined || like.starts.length === 0) return this.#compose(bytes, 0, end, EMPTY, EMPTY);
    const old = like.bytes;
    const oldEnd = bodyEnd(old);
    const { starts, ids } = like;
    const count = starts.length;
    const prefix = commonPrefix(old, bytes, Math.min(oldEnd, end));
    if (prefix === oldEnd && prefix === end) return { bytes, starts, ids, head: count, tail: 0 };
    // Lines both start with: those whose newline is in the common prefix (the last line has none).
    const head = upperBound(starts, prefix) - 1;
    const headBytes = starts[head] as number;
    // Lines both end with: those whose preceding newline is in the common suffix, after the head's.
    const suffix = commonSuffix(old, oldEnd, bytes, end, Math.min(oldEnd, end) - headBytes);
    const tail = count - upperBound(starts, oldEnd - suffix);
    const shift = end - oldEnd;
    const middleEnd = tail === 0 ? end : (starts[count - tail] as number) + shift - 1;
    return this.#compose(
      bytes,
      headBytes,
      middleEnd,
      { starts: starts.subarray(0, head), ids: ids.subarray(0, head) },
      { starts: starts.subarray(count - tail), ids: ids.subarray(count - tail) },
      shift,
    );
  }

  /**
   * `head`, the lines of `bytes[from, to)` (none when `to < from`: head and tail share their newline), then
   * `tail` moved by `shift` bytes.
   */
  #compose(bytes: Buffer, from: number, to: number, head: Part, tail: Part, shift = 0): Lines {
    const middle = to < from ? [] : UTF8.decode(bytes.subarray(from, to)).split('\n');
    const size = head.ids.length + middle.length + tail.ids.length;
    const starts = new Int32Array(size);
    const ids = new Int32Array(size);
    starts.set(head.starts);
    ids.set(head.ids);
    let at = head.ids.length;
    let start = from;
    for (const line of middle) {
      starts[at] = start;
      ids[at] = this.#intern(line);
      at += 1;
      start = bytes.indexOf(NEWLINE, start) + 1;
    }
    for (let index = 0; index < tail.starts.length; index += 1) starts[at + index] = (tail.starts[index] as number) + shift;
    ids.set(tail.ids, at);
    return { bytes, starts, ids, head: head.ids.length, tail: tail.ids.length };
  }

  #intern(line: string): number {
    let id = this.#ids.get(line);
    if (id === undefined) {
      id = this.#texts.length;
      this.#ids.set(line, id);
      this.#texts.push(line);
    }
    return id;
  }
}

interface Part {
  starts: Int32Array;
  ids: Int32Array;
}

const EMPTY: Part = { starts: new Int32Array(0), ids: new Int32Array(0) };

const bodyEnd = (bytes: Buffer): number => (bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE ? bytes.length - 1 : bytes.length);

/** The first index whose value is greater than `value` (`values` ascending). */
function upperBound(values: Int32Array, value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((values[mid] as number) <= value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** How many bytes, at most `limit`, `a` and `b` start with alike (a binary search over native compares). */
function commonPrefix(a: Buffer, b: Buffer, limit: number): number {
  let equal = 0;
  let high = limit;
  while (equal < high) {
    const mid = equal + Math.ceil((high - equal) / 2);
    if (a.compare(b, equal, mid, equal, mid) === 0) equal = mid;
    else high = mid - 1;
  }
  return equal;
}

/** How many bytes, at most `limit`, `a[0, aEnd)` and `b[0, bEnd)` end with alike. */
function commonSuffix(a: Buffer, aEnd: number, b: Buffer, bEnd: number, limit: number): number {
  let equal = 0;
  let high = limit;
  while (equal < high) {
    const mid = equal + Math.ceil((high - equal) / 2);
    if (a.compare(b, bEnd - mid, bEnd - equal, aEnd - mid, aEnd - equal) === 0) equal = mid;
    else high = mid - 1;
  }
  return equal;
}
