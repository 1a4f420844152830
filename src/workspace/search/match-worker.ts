import type { MessagePort } from 'node:worker_threads';

/**
 * A file for a worker: its bytes, (host backends) a pinned directory and a name to read there, or the text
 * of a legacy-encoded file the main thread decoded (BOM already stripped).
 */
export type MatchFile =
  { path: string; bytes: Uint8Array } | { path: string; directory: string; name: string } | { path: string; text: string };

/** One batch of files for a worker: every file's lines are matched with one regex. */
export interface LinesJob {
  kind: 'lines';
  pattern: string;
  flags: string;
  /** UTF-8 bytes every matching line contains (see `requiredLiteral`): files and lines without them are skipped. */
  needle: Uint8Array | undefined;
  /** UTF-8 bytes every matching line also contains: a line holding the needle but not all of these is skipped. */
  alsoNeeded?: Uint8Array[];
  /** Stop after this many matches (the call's remaining budget). */
  maxMatches: number;
  files: MatchFile[];
}

export interface LineMatch {
  path: string;
  lineNumber: number;
  lineContent: string;
  matchStart: number;
  matchEnd: number;
}

/** One batch of paths for a worker: which of them a compiled glob (picomatch's regex and glob) matches. */
export interface PathsJob {
  kind: 'paths';
  source: string;
  flags: string;
  /** picomatch matches the glob's own text as a path before trying its regex. */
  glob: string;
  paths: string[];
}

/**
 * What a lines job found: its matches, and the files that are not UTF-8 but may be text in a legacy
 * encoding (their index in the job and their bytes), for the main thread to decode and match as text.
 */
export interface LinesResult {
  matches: LineMatch[];
  undecoded: { index: number; bytes: Uint8Array }[];
}

export type WorkerJob = LinesJob | PathsJob;
export type WorkerRequest = WorkerJob & { id: number };
/** `result`: what a lines job found; the indices of the matching paths of a paths job. */
export type WorkerReply = { id: number; result: LinesResult | number[] } | { id: number; error: string };

/**
 * False when a file cannot hold a match of a pattern whose matches all contain `needle` (UTF-8 bytes):
 * the file lacks those bytes and either is UTF-8, or is binary (a NUL and no UTF-16 BOM: every legacy
 * decoding would yield a control character), or is a legacy single- or multi-byte encoding in which an
 * ASCII needle has the very same bytes (every encoding chardet names but UTF-16/32, which need a BOM
 * here). Self-contained: it also runs inside the match worker.
 */
export function mayHoldNeedle(bytes: Uint8Array, needle: Uint8Array, isUtf8: (bytes: Uint8Array) => boolean): boolean {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.includes(Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength))) return true;
  const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
  if (utf16) return true;
  if (needle.every((byte) => byte < 0x80)) return false;
  return !isUtf8(bytes) && !buffer.includes(0);
}

/**
 * The body of a match worker. It runs in a worker thread, so a regex that backtracks for ever blocks only
 * that thread, which the pool terminates at the deadline. It is self-contained (no imports, no closure):
 * the pool starts it from its source text, so the same code runs from `src/` under a TypeScript test
 * runner and from `dist/`. grep's line semantics live here and only here: a UTF-8 BOM is not part of line 1,
 * lines split on `\n` with one trailing `\r` dropped, the first match of each line. A file that is not
 * UTF-8 is binary when it holds a NUL and no UTF-16 BOM (skipped); any other is handed back undecoded
 * (`LinesResult.undecoded`) so the main thread decodes it with the tools' codec (`decodeText`: UTF-16 with
 * a BOM, or what chardet detects) and sends its text back to be matched here, in the same job's order.
 *
 * Work is skipped where it cannot matter: with a needle, a file that cannot hold it (`mayHoldNeedle`) is
 * never decoded, and in a UTF-8 file only the lines holding it are decoded and matched. A file given by
 * directory and name is opened there without following a final link (`O_NOFOLLOW`; the directory was
 * pinned and checked inside the root by the caller), and skipped when that fails or it is not a regular file.
 */
export function matchWorkerMain(
  port: MessagePort,
  fs: typeof import('node:fs'),
  isUtf8: (bytes: Uint8Array) => boolean,
  mayHold: typeof mayHoldNeedle,
): void {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
  const NEWLINE = 10;
  /** Files up to this size are read into one reused buffer; a larger one gets its own once its head is read there. */
  const SCRATCH_BYTES = 1 << 20;
  let cached: { key: string; regex: RegExp } | undefined;

  /** Files read by name land here when they fit: one buffer reused, no allocation (nor its page faults) per file. */
  const scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  const readInto = (fd: number, buffer: Buffer, from: number, to: number): number => {
    let done = from;
    while (done < to) {
      const read = fs.readSync(fd, buffer, done, to - done, done);
      if (read === 0) break;
      done += read;
    }
    return done;
  };
  /**
   * A regular file's bytes (valid until the next read: a view of the scratch buffer when it fits). A large
   * file whose first bytes already prove it binary (see `provesBinary`) is skipped without reading the rest:
   * the whole file would be skipped as binary too.
   */
  const readAt = (directory: string, name: string): Buffer | undefined => {
    let fd: number;
    try {
      fd = fs.openSync(`${directory}/${name}`, OPEN_FLAGS);
    } catch {
      return undefined;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return undefined;
      const size = st.size;
      if (size <= scratch.length) return scratch.subarray(0, readInto(fd, scratch, 0, size));
      const probed = readInto(fd, scratch, 0, scratch.length);
      if (probed < scratch.length) return scratch.subarray(0, probed);
      if (provesBinary(scratch)) return undefined;
      const buffer = Buffer.allocUnsafeSlow(size);
      scratch.copy(buffer, 0, 0, probed);
      return buffer.subarray(0, readInto(fd, buffer, probed, size));
    } catch {
      return undefined;
    } finally {
      fs.closeSync(fd);
    }
  };
  /**
   * Whether a file starting with `head` is binary by the rule below (not UTF-8, a NUL, no UTF-16 BOM): the
   * head is cut after its last ASCII byte, a character boundary, so a head that is not UTF-8 there makes a
   * file that is not UTF-8 either.
   */
  const provesBinary = (head: Buffer): boolean => {
    if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return false;
    if (!head.includes(0)) return false;
    let end = head.length;
    while (end > 0 && (head[end - 1] as number) >= 0x80) end -= 1;
    return !isUtf8(head.subarray(0, end));
  };

  const compile = (source: string, flags: string): RegExp => {
    const key = `${flags}/${source}`;
    if (cached?.key !== key) cached = { key, regex: new RegExp(source, flags) };
    return cached.regex;
  };

  /** picomatch's own test (without `format`): the glob's text itself, or its regex; never the empty path. */
  const selectPaths = (request: PathsJob): number[] => {
    const regex = compile(request.source, request.flags);
    const selected: number[] = [];
    request.paths.forEach((path, index) => {
      if (path !== '' && (path === request.glob || regex.test(path))) selected.push(index);
    });
    return selected;
  };

  const matchLines = (request: LinesJob): LinesResult => {
    const regex = compile(request.pattern, request.flags);
    const needle = request.needle === undefined ? undefined : Buffer.from(request.needle);
    const alsoNeeded = (request.alsoNeeded ?? []).map((literal) => Buffer.from(literal));
    const holdsTheOthers = (bytes: Buffer, start: number, end: number): boolean => {
      if (alsoNeeded.length === 0) return true;
      const line = bytes.subarray(start, end);
      return alsoNeeded.every((literal) => line.includes(literal));
    };
    const matches: LineMatch[] = [];
    const undecoded: LinesResult['undecoded'] = [];
    const done = (): LinesResult => ({ matches, undecoded });
    const matchLine = (path: string, lineNumber: number, raw: string): boolean => {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      const match = regex.exec(line);
      if (match === null) return false;
      matches.push({ path, lineNumber, lineContent: line, matchStart: match.index, matchEnd: match.index + match[0].length });
      return matches.length >= request.maxMatches;
    };
    const matchText = (path: string, text: string): boolean => {
      const lines = text.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      for (let index = 0; index < lines.length; index += 1) if (matchLine(path, index + 1, lines[index] as string)) return true;
      return false;
    };
    /** A file that is not UTF-8: handed back when it may be legacy text, skipped when it is binary. */
    const notUtf8 = (index: number, bytes: Buffer): void => {
      const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
      if (utf16 || !bytes.includes(0)) undecoded.push({ index, bytes: new Uint8Array(bytes) });
    };

    for (let index = 0; index < request.files.length; index += 1) {
      const file = request.files[index] as MatchFile;
      if ('text' in file) {
        if (matchText(file.path, file.text)) return done();
        continue;
      }
      const bytes =
        'bytes' in file ? Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength) : readAt(file.directory, file.name);
      if (bytes === undefined || bytes.length === 0) continue;
      if (needle === undefined) {
        let text: string;
        try {
          text = decoder.decode(bytes);
        } catch {
          notUtf8(index, bytes);
          continue;
        }
        if (matchText(file.path, text)) return done();
        continue;
      }
      if (!mayHold(bytes, needle, isUtf8)) continue;
      if (!isUtf8(bytes)) {
        notUtf8(index, bytes);
        continue;
      }
      if (!alsoNeeded.every((literal) => bytes.includes(literal))) continue;
      let found = bytes.indexOf(needle);
      const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
      let lineNumber = 1;
      let counted = 0;
      while (found !== -1) {
        const start = Math.max(bytes.lastIndexOf(NEWLINE, found) + 1, bom);
        let end = bytes.indexOf(NEWLINE, found);
        if (end === -1) end = bytes.length;
        for (
          let newline = bytes.indexOf(NEWLINE, counted);
          newline !== -1 && newline < start;
          newline = bytes.indexOf(NEWLINE, newline + 1)
        ) {
          lineNumber += 1;
          counted = newline + 1;
        }
        counted = start;
        if (holdsTheOthers(bytes, start, end) && matchLine(file.path, lineNumber, bytes.toString('utf8', start, end))) return done();
        found = end >= bytes.length ? -1 : bytes.indexOf(needle, end + 1);
      }
    }
    return done();
  };

  port.on('message', (request: WorkerRequest) => {
    let reply: WorkerReply;
    try {
      reply = { id: request.id, result: request.kind === 'lines' ? matchLines(request) : selectPaths(request) };
    } catch (error) {
      reply = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply);
  });
}

/** What `new Worker(…, { eval: true })` runs: the function above, given the thread's port, `fs`, `isUtf8` and `mayHoldNeedle`. */
export const MATCH_WORKER_SOURCE = `(${matchWorkerMain.toString()})(require('node:worker_threads').parentPort, require('node:fs'), require('node:buffer').isUtf8, ${mayHoldNeedle.toString()});`;
