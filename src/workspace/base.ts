import picomatch from 'picomatch';
import {
  DirectoryNotEmptyError,
  FileExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  InvalidContentError,
  IsADirectoryError,
  LimitExceededError,
  NotADirectoryError,
  PathEscapeError,
  ReadOnlyError,
} from './errors.js';
import { resolveLimits, type WorkspaceLimits } from './limits.js';
import {
  assertCreatable,
  baseName,
  displayInput,
  displayPath,
  isSameOrInside,
  joinPath,
  normalizePath,
  parentPath,
  pathDepth,
  relativeTo,
  type NormalizedPath,
} from './paths.js';
import { decodeUtf8, encodeUtf8, lineWindow, splitLines } from './text.js';
import type {
  BackendKind,
  CopyOptions,
  DeleteOptions,
  GlobMatch,
  GlobOptions,
  GrepMatch,
  GrepOptions,
  ListEntry,
  MkdirOptions,
  ReadBytesOptions,
  ReadBytesResult,
  ReadOptions,
  ReadResult,
  RenameOptions,
  StatResult,
  Workspace,
  WriteMode,
  WriteOptions,
  WriteResult,
} from './types.js';

/** What a path is, without following a final symlink. */
export type EntryKind = 'file' | 'directory' | 'symlink';

/** One entry a walk yields. */
export interface WalkEntry {
  path: NormalizedPath;
  /** A regular file, or a symlink to a file inside the root (matched and searched like a file). */
  isFile: boolean;
  /** A real directory (walks descend into these only). */
  isDirectory: boolean;
}

export interface WriteFileRequest {
  mode: WriteMode;
  createParents: boolean;
  mimeType: string | undefined;
}

export interface BaseWorkspaceOptions {
  readOnly?: boolean;
  limits?: Partial<WorkspaceLimits>;
}

const WRITE_MODES: readonly WriteMode[] = ['create', 'overwrite', 'append'];

/**
 * The public API layer every backend shares: it validates arguments, normalises and checks paths, enforces
 * read-only mode (checked first) and the creation limits, and implements `read`, `glob`, `grep` and the
 * decision rules of `mkdir`, `delete`, `rename` and `copy` once. Backends implement the small set of
 * primitives below over normalised paths, the way a storage driver does.
 *
 * Primitives receive paths that are already normalised and inside the root; they still own the sandbox on
 * disk (symlinks), and raise the protocol's errors with normalised paths only.
 */
export abstract class BaseWorkspace implements Workspace {
  abstract readonly backend: BackendKind;
  abstract readonly root: string;
  readonly limits: Readonly<WorkspaceLimits>;
  #readOnly: boolean;

  protected constructor(options: BaseWorkspaceOptions = {}) {
    this.limits = resolveLimits(options.limits);
    this.#readOnly = options.readOnly === true;
  }

  get readOnly(): boolean {
    return this.#readOnly;
  }

  /** Makes the workspace read-only from now on. One way: a sealed workspace cannot be unsealed. */
  seal(): void {
    this.#readOnly = true;
  }

  // ---- primitives -------------------------------------------------------------------------------------

  /** Bytes of a file (following a link inside the root). ENOENT, EISDIR, EACCES. */
  protected abstract readFileAt(
    path: NormalizedPath,
    range: { offset: number; length?: number },
  ): Promise<{ content: Uint8Array; sizeBytes: number }>;
  /** Writes a file. Owns `create` exclusivity, `append`, EISDIR, ENOTDIR in the parent chain, ENOENT without createParents. */
  protected abstract writeFileAt(path: NormalizedPath, content: Uint8Array, request: WriteFileRequest): Promise<void>;
  /** What the path is without following a final link; `undefined` when missing. EACCES for a parent chain that leaves the root. */
  protected abstract entryKind(path: NormalizedPath): Promise<EntryKind | undefined>;
  protected abstract statAt(path: NormalizedPath): Promise<StatResult>;
  /** Children of a directory, any order. ENOENT, ENOTDIR. */
  protected abstract listAt(path: NormalizedPath): Promise<ListEntry[]>;
  /**
   * Every entry below `base` (not `base` itself), any order, never descending through a link; a `base` that
   * is a file (or a link to a file inside the root) yields itself; a missing `base` yields nothing.
   */
  protected abstract walk(base: NormalizedPath): AsyncIterable<WalkEntry>;
  /** Creates a directory and any missing parents. ENOTDIR for a file in the chain. */
  protected abstract makeDirectory(path: NormalizedPath): Promise<void>;
  /**
   * Removes a file or link (never following it), or a directory: with `recursive` with everything in it,
   * otherwise only when it is empty (the shared check has seen no visible children, but a backend may hold
   * entries it never shows, which must not go with it).
   */
  protected abstract removeEntry(path: NormalizedPath, options: { recursive: boolean }): Promise<void>;
  /** Moves an entry (a link as a link), creating missing parents of `to`; an existing `to` of the same kind is replaced. */
  protected abstract moveEntry(from: NormalizedPath, to: NormalizedPath): Promise<void>;
  /** Copies an entry (a link as a link, a directory with its contents); an existing `to` of the same kind is replaced. */
  protected abstract copyEntry(from: NormalizedPath, to: NormalizedPath): Promise<void>;

  // ---- shared checks ----------------------------------------------------------------------------------

  /** Read-only is checked before anything else, including path validation. */
  protected assertWritable(pathInput?: unknown): void {
    if (this.#readOnly) throw new ReadOnlyError(displayInput(pathInput));
  }

  protected resolvePath(input: unknown): NormalizedPath {
    return normalizePath(input);
  }

  // ---- reading ----------------------------------------------------------------------------------------

  async read(path: string, options: ReadOptions = {}): Promise<ReadResult> {
    const target = this.resolvePath(path);
    const offset = nonNegativeInteger(options.offset ?? 0, 'offset');
    const limit = options.limit ?? 2000;
    if (!Number.isSafeInteger(limit) || limit < -1) {
      throw new InvalidArgumentError(`limit must be a whole number of lines (or -1 for all), got ${String(limit)}`);
    }
    const { content } = await this.readFileAt(target, { offset: 0 });
    const text = decodeUtf8(content);
    if (text === undefined) throw new InvalidContentError(displayPath(target));
    return { path: displayPath(target), ...lineWindow(text, offset, limit) };
  }

  async readBytes(path: string, options: ReadBytesOptions = {}): Promise<ReadBytesResult> {
    const target = this.resolvePath(path);
    const offset = nonNegativeInteger(options.offset ?? 0, 'offset');
    const limit = options.limit === undefined ? undefined : nonNegativeInteger(options.limit, 'limit');
    const { content, sizeBytes } = await this.readFileAt(target, limit === undefined ? { offset } : { offset, length: limit });
    return {
      path: displayPath(target),
      content,
      sizeBytes,
      offset,
      limit: content.byteLength,
      truncated: offset + content.byteLength < sizeBytes,
    };
  }

  async exists(path: string): Promise<boolean> {
    let target: NormalizedPath;
    try {
      target = this.resolvePath(path);
    } catch (error) {
      if (error instanceof PathEscapeError) return false;
      throw error;
    }
    try {
      const kind = await this.entryKind(target);
      if (kind !== 'symlink') return kind !== undefined;
      // A link counts only when it resolves inside the root.
      await this.statAt(target);
      return true;
    } catch (error) {
      if (error instanceof PathEscapeError || error instanceof FileNotFoundError || error instanceof NotADirectoryError) return false;
      throw error;
    }
  }

  async stat(path: string): Promise<StatResult> {
    return this.statAt(this.resolvePath(path));
  }

  async list(path = '.'): Promise<ListEntry[]> {
    const entries = await this.listAt(this.resolvePath(path));
    return entries.sort((a, b) => compareStrings(a.name, b.name));
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<GlobMatch[]> {
    const base = this.resolvePath(options.path ?? '.');
    const matches = await this.matchFiles(base, requirePattern(pattern), options.dot === true);
    return matches.map((path) => ({ path, isFile: true as const }));
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    if (typeof pattern !== 'string' || pattern === '') throw new InvalidArgumentError('grep pattern must be a non-empty string');
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, options.ignoreCase === true ? 'iu' : 'u');
    } catch (error) {
      throw new InvalidArgumentError(`invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`);
    }
    const maxMatches = nonNegativeInteger(options.maxMatches ?? 1000, 'maxMatches');
    const base = this.resolvePath(options.path ?? '.');
    if (maxMatches === 0) return [];
    const files = await this.matchFiles(base, options.glob === undefined ? undefined : requirePattern(options.glob), false);

    const results: GrepMatch[] = [];
    for (const file of files) {
      let bytes: Uint8Array;
      try {
        ({ content: bytes } = await this.readFileAt(file, { offset: 0 }));
      } catch (error) {
        // A file removed or swapped for a link during the walk is simply not searched.
        if (error instanceof FileNotFoundError || error instanceof IsADirectoryError || error instanceof PathEscapeError) continue;
        throw error;
      }
      const text = decodeUtf8(bytes);
      if (text === undefined) continue;
      const lines = splitLines(text);
      for (let index = 0; index < lines.length; index += 1) {
        const raw = lines[index] as string;
        const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
        const match = regex.exec(line);
        if (match === null) continue;
        results.push({
          path: file,
          lineNumber: index + 1,
          lineContent: line,
          matchStart: match.index,
          matchEnd: match.index + match[0].length,
        });
        if (results.length >= maxMatches) return results;
      }
    }
    return results;
  }

  /**
   * Files under `base` whose path relative to `base` matches `pattern`, sorted. Without a pattern every file
   * matches except those under dot segments (as ripgrep skips hidden files), but a `base` that names a file
   * always matches. The walk starts at the pattern's literal prefix, so `src/**` never visits `node_modules/`.
   */
  protected async matchFiles(base: NormalizedPath, pattern: string | undefined, dot: boolean): Promise<string[]> {
    const relativePattern = (pattern ?? '**').replace(/^(?:\.?\/)+/, '');
    const matcher = picomatch(relativePattern, { dot });
    const literalPrefix = picomatch.scan(relativePattern).base;
    let start = base;
    if (literalPrefix !== '' && !literalPrefix.split('/').includes('..') && !literalPrefix.includes('\\')) {
      try {
        start = normalizePath(joinPath(base, literalPrefix));
      } catch {
        start = base;
      }
    }
    const found: string[] = [];
    for await (const entry of this.walk(start)) {
      if (!entry.isFile) continue;
      if (entry.path === base ? pattern === undefined || matcher(baseName(base)) : matcher(relativeTo(entry.path, base)))
        found.push(entry.path);
    }
    return found.sort(compareStrings);
  }

  // ---- writing ----------------------------------------------------------------------------------------

  async write(path: string, content: string, options: WriteOptions = {}): Promise<WriteResult> {
    this.assertWritable(path);
    if (typeof content !== 'string')
      throw new InvalidArgumentError('write content must be a string (use writeBytes for bytes)', displayInput(path));
    return this.writeChecked(path, encodeUtf8(content), options);
  }

  async writeBytes(path: string, content: Uint8Array, options: WriteOptions = {}): Promise<WriteResult> {
    this.assertWritable(path);
    if (!(content instanceof Uint8Array)) throw new InvalidArgumentError('writeBytes content must be a Uint8Array', displayInput(path));
    return this.writeChecked(path, content, options);
  }

  private async writeChecked(path: string, content: Uint8Array, options: WriteOptions): Promise<WriteResult> {
    const target = this.resolvePath(path);
    const mode = options.mode ?? 'overwrite';
    if (!WRITE_MODES.includes(mode))
      throw new InvalidArgumentError(`mode must be one of ${WRITE_MODES.join(', ')}, got ${String(mode)}`, displayPath(target));
    if (options.mimeType !== undefined && typeof options.mimeType !== 'string')
      throw new InvalidArgumentError('mimeType must be a string', displayPath(target));
    if (target === '') throw new IsADirectoryError('/');
    if (content.byteLength > this.limits.maxWriteBytes) {
      throw new LimitExceededError(
        `write of ${content.byteLength} bytes is over the limit of ${this.limits.maxWriteBytes} bytes: ${displayPath(target)}`,
        displayPath(target),
      );
    }
    assertCreatable(target, this.limits);
    await this.writeFileAt(target, content, { mode, createParents: options.createParents !== false, mimeType: options.mimeType });
    return { path: displayPath(target), bytesWritten: content.byteLength, mode };
  }

  async mkdir(path: string, options: MkdirOptions = {}): Promise<void> {
    this.assertWritable(path);
    const target = this.resolvePath(path);
    const existOk = options.existOk !== false;
    const kind = await this.entryKind(target);
    // A link to a directory inside the root is a directory for mkdir, as `mkdir -p` sees it (stat follows it
    // and refuses a link that leaves the root).
    const isDirectory = target === '' || kind === 'directory' || (kind === 'symlink' && (await this.statAt(target)).isDirectory);
    if (isDirectory) {
      if (existOk) return;
      throw new FileExistsError(displayPath(target));
    }
    if (kind !== undefined) throw new FileExistsError(displayPath(target), `already exists and is not a directory: ${displayPath(target)}`);
    assertCreatable(target, this.limits);
    if (options.parents === false) {
      const parent = parentPath(target);
      const parentKind = await this.entryKind(parent);
      if (parentKind === undefined)
        throw new FileNotFoundError(
          displayPath(parent),
          `parent directory does not exist: ${displayPath(parent)} (pass parents: true to create it)`,
        );
      if (parentKind === 'file') throw new NotADirectoryError(displayPath(parent));
    }
    await this.makeDirectory(target);
  }

  async delete(path: string, options: DeleteOptions = {}): Promise<void> {
    this.assertWritable(path);
    const target = this.resolvePath(path);
    if (target === '') throw new InvalidArgumentError('cannot delete the workspace root', '/');
    const kind = await this.entryKind(target);
    if (kind === undefined) throw new FileNotFoundError(displayPath(target));
    if (kind === 'directory' && options.recursive !== true && (await this.listAt(target)).length > 0) {
      throw new DirectoryNotEmptyError(displayPath(target));
    }
    await this.removeEntry(target, { recursive: options.recursive === true });
  }

  async rename(from: string, to: string, options: RenameOptions = {}): Promise<void> {
    this.assertWritable(from);
    const plan = await this.planTransfer('move', from, to, options.overwrite === true, true);
    if (plan !== undefined) await this.moveEntry(plan.source, plan.target);
  }

  async copy(from: string, to: string, options: CopyOptions = {}): Promise<void> {
    this.assertWritable(from);
    const plan = await this.planTransfer('copy', from, to, options.overwrite === true, options.recursive === true);
    if (plan !== undefined) await this.copyEntry(plan.source, plan.target);
  }

  /** The checks `rename` and `copy` share; `undefined` when there is nothing to do (a path onto itself). */
  private async planTransfer(
    verb: 'move' | 'copy',
    fromInput: string,
    toInput: string,
    overwrite: boolean,
    recursive: boolean,
  ): Promise<{ source: NormalizedPath; target: NormalizedPath } | undefined> {
    const source = this.resolvePath(fromInput);
    const target = this.resolvePath(toInput);
    if (source === '') throw new InvalidArgumentError(`cannot ${verb} the workspace root`, '/');
    if (target === '') throw new InvalidArgumentError(`cannot ${verb} onto the workspace root`, '/');
    const sourceKind = await this.entryKind(source);
    if (sourceKind === undefined) throw new FileNotFoundError(displayPath(source));
    if (sourceKind === 'directory' && !recursive) {
      throw new IsADirectoryError(displayPath(source), `is a directory: ${displayPath(source)} (pass recursive: true to copy a directory)`);
    }
    if (source === target) {
      if (verb === 'move') return undefined;
      throw new FileExistsError(displayPath(target), `cannot copy a path onto itself: ${displayPath(target)}`);
    }
    if (isSameOrInside(target, source)) {
      if (sourceKind !== 'directory')
        throw new NotADirectoryError(displayPath(source), `not a directory: ${displayPath(source)} is a file`);
      throw new InvalidArgumentError(
        `cannot ${verb} a directory into itself: ${displayPath(source)} -> ${displayPath(target)}`,
        displayPath(target),
      );
    }
    const targetKind = await this.entryKind(target);
    if (targetKind !== undefined) {
      if (!overwrite)
        throw new FileExistsError(displayPath(target), `already exists: ${displayPath(target)} (pass overwrite: true to replace it)`);
      if (sourceKind === 'directory' && targetKind !== 'directory')
        throw new NotADirectoryError(displayPath(target), `cannot replace a file with a directory: ${displayPath(target)}`);
      if (sourceKind !== 'directory' && targetKind === 'directory')
        throw new IsADirectoryError(displayPath(target), `cannot replace a directory with a file: ${displayPath(target)}`);
    }
    assertCreatable(target, this.limits, sourceKind === 'directory' ? await this.subtreeDepth(source) : 0);
    return { source, target };
  }

  /** How many segments the deepest entry below `path` adds to it. */
  private async subtreeDepth(path: NormalizedPath): Promise<number> {
    let deepest = 0;
    const base = pathDepth(path);
    for await (const entry of this.walk(path)) deepest = Math.max(deepest, pathDepth(entry.path) - base);
    return deepest;
  }
}

function nonNegativeInteger(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a non-negative whole number, got ${String(value)}`);
  }
  return value;
}

function requirePattern(pattern: unknown): string {
  if (typeof pattern !== 'string' || pattern === '') throw new InvalidArgumentError('glob pattern must be a non-empty string');
  return pattern;
}

/** Code-unit order: deterministic, locale-free, the order results are promised in. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
