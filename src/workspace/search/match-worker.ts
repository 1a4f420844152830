import type { MessagePort } from 'node:worker_threads';

/**
 * A file for a worker: its bytes; (host backends) its path through a pinned directory
 * (`/proc/<pid>/fd/<fd>/<name>`), which the worker opens without following a final link; or the text of a
 * legacy-encoded file the main thread decoded (BOM already stripped). A file has no workspace path here:
 * matches name it by its index in the job, and the caller, who knows the paths, names them. One string per
 * file read by the worker keeps the message small: cloning three strings a file cost the main thread more
 * than the worker spent reading it.
 */
export type MatchFile = Uint8Array | string | { text: string };

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

/** A match as a worker reports it: its file by index in the job. */
export interface FileMatch {
  file: number;
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
  matches: FileMatch[];
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
  // Called once a file (on a worker, once per literal of each file): a Buffer is searched as it is and the
  // needle as given (`indexOf` takes any Uint8Array), with no closure, so the common miss allocates nothing.
  const buffer = bytes instanceof Buffer ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.indexOf(needle) !== -1) return true;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return true;
  let ascii = true;
  for (let index = 0; index < needle.length && ascii; index += 1) ascii = (needle[index] as number) < 0x80;
  if (ascii) return false;
  return !isUtf8(bytes) && buffer.indexOf(0) === -1;
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
 * never decoded, and in a UTF-8 file only the lines holding it are decoded and matched. A file given by its
 * path through a pinned directory is opened without following a final link (`O_NOFOLLOW`; the directory was
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
   * A regular file's bytes (valid until the next read: a view of the scratch buffer when it fits). It is
   * read up to its end before anything asks its size: an `fstat` per file (and the Stats object Node makes
   * of it) cost more than the read of a small file. Every read is a `pread`, which a FIFO, a socket or a
   * terminal refuses (ESPIPE) without giving up a byte, and a directory too (EISDIR); a file that fills the
   * scratch buffer is checked to be a regular file before more of it is read, so an endless device never
   * is. A large file whose first bytes already prove it binary (see `provesBinary`) is skipped without
   * reading the rest: the whole file would be skipped as binary too.
   */
  const readAt = (at: string): Buffer | undefined => {
    let fd: number;
    try {
      fd = fs.openSync(at, OPEN_FLAGS);
    } catch {
      return undefined;
    }
    try {
      const probed = readInto(fd, scratch, 0, scratch.length);
      if (probed < scratch.length) return scratch.subarray(0, probed);
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return undefined;
      const size = st.size;
      if (size <= probed) return scratch;
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
    /** Every literal a matching line holds, the needle first; none may hold a newline, or no line can match. */
    const literals = needle === undefined ? [] : [needle, ...alsoNeeded];
    const noLineHoldsThem = literals.some((literal) => literal.includes(NEWLINE));
    /** Where each literal occurs next in the file being searched (at or after the position asked last). */
    const next = literals.map(() => 0);
    /** Whether a file may hold every literal; a loop, not `every`, so no closure is made per file. */
    const mayHoldAll = (bytes: Buffer): boolean => {
      for (let index = 0; index < literals.length; index += 1) if (!mayHold(bytes, literals[index] as Buffer, isUtf8)) return false;
      return true;
    };
    const matches: FileMatch[] = [];
    const undecoded: LinesResult['undecoded'] = [];
    const done = (): LinesResult => ({ matches, undecoded });
    /** The line's first match, recorded; true once `maxMatches` are known. A line number to count is counted only then. */
    const matchLine = (file: number, raw: string, lineNumber: number | (() => number)): boolean => {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      const match = regex.exec(line);
      if (match === null) return false;
      matches.push({
        file,
        lineNumber: typeof lineNumber === 'number' ? lineNumber : lineNumber(),
        lineContent: line,
        matchStart: match.index,
        matchEnd: match.index + match[0].length,
      });
      return matches.length >= request.maxMatches;
    };
    const matchText = (file: number, text: string): boolean => {
      const lines = text.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      for (let index = 0; index < lines.length; index += 1) if (matchLine(file, lines[index] as string, index + 1)) return true;
      return false;
    };
    /**
     * The lines of a UTF-8 file that hold every literal, matched. The literal found furthest ahead names
     * the first line that may hold them all (no earlier line holds that one); a line holding them all is
     * decoded and matched, else the search goes on from that line. Each step finds a literal's next
     * occurrence, so a common needle (`function` in `function\s+\w+Async`) costs no more than the rarest.
     * Lines are counted only up to a match.
     */
    const matchUtf8 = (file: number, bytes: Buffer): boolean => {
      const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
      let lineNumber = 1;
      let counted = 0;
      let lineStart = 0;
      const countLines = (): number => {
        for (
          let newline = bytes.indexOf(NEWLINE, counted);
          newline !== -1 && newline < lineStart;
          newline = bytes.indexOf(NEWLINE, newline + 1)
        )
          lineNumber += 1;
        counted = lineStart;
        return lineNumber;
      };
      for (let index = 0; index < literals.length; index += 1) next[index] = -1;
      let from = bom;
      for (;;) {
        let furthest = -1;
        for (let index = 0; index < literals.length; index += 1) {
          if ((next[index] as number) < from) next[index] = bytes.indexOf(literals[index] as Buffer, from);
          const at = next[index] as number;
          if (at === -1) return false;
          if (at > furthest) furthest = at;
        }
        const start = Math.max(bytes.lastIndexOf(NEWLINE, furthest) + 1, bom);
        let onEarlierLine = false;
        for (let index = 0; index < literals.length; index += 1) if ((next[index] as number) < start) onEarlierLine = true;
        if (onEarlierLine) {
          from = start;
          continue;
        }
        let end = bytes.indexOf(NEWLINE, furthest);
        if (end === -1) end = bytes.length;
        lineStart = start;
        if (matchLine(file, bytes.toString('utf8', start, end), countLines)) return true;
        if (end >= bytes.length) return false;
        from = end + 1;
      }
    };
    /** A file that is not UTF-8: handed back when it may be legacy text, skipped when it is binary. */
    const notUtf8 = (index: number, bytes: Buffer): void => {
      const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
      if (utf16 || !bytes.includes(0)) undecoded.push({ index, bytes: new Uint8Array(bytes) });
    };

    for (let index = 0; index < request.files.length; index += 1) {
      const file = request.files[index] as MatchFile;
      let bytes: Buffer | undefined;
      if (typeof file === 'string') bytes = readAt(file);
      else if (file instanceof Uint8Array) bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
      else {
        if (matchText(index, file.text)) return done();
        continue;
      }
      if (bytes === undefined || bytes.length === 0) continue;
      if (needle === undefined) {
        let text: string;
        try {
          text = decoder.decode(bytes);
        } catch {
          notUtf8(index, bytes);
          continue;
        }
        if (matchText(index, text)) return done();
        continue;
      }
      if (noLineHoldsThem || !mayHoldAll(bytes)) continue;
      if (!isUtf8(bytes)) {
        notUtf8(index, bytes);
        continue;
      }
      if (matchUtf8(index, bytes)) return done();
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
