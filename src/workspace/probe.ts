import { walkBatches, type BackendDriver, type DriverEntryKind, type DriverStat, type DriverWalkEntry } from './driver.js';
import { fromDriverError } from './driver-errors.js';
import {
  ConflictError,
  FileNotFoundError,
  InvalidArgumentError,
  IsADirectoryError,
  NameTooLongError,
  NotADirectoryError,
  NotSupportedError,
  PathEscapeError,
  type WorkspaceError,
} from './errors.js';
import { compareStrings, type SearchEntry } from './glob-grep.js';
import { displayPath, joinPath, parentPath, splitPath, type NormalizedPath } from './paths.js';
import type { ListEntry, StatResult } from './types.js';

/**
 * The shared layer's read-only view of a driver: every call's error mapped to a WorkspaceError, the root
 * always a directory, links resolved the way the protocol promises (one leaving the root is refused, a
 * dangling one is left to the driver), and the walk glob and grep use.
 */
export class DriverProbe {
  readonly #driver: BackendDriver;

  constructor(driver: BackendDriver) {
    this.#driver = driver;
  }

  /** glob and grep's walk, in batches: `base` itself when it is a file, else every entry below it (`descend`: see `BatchedWalk`). */
  async *searchWalk(base: NormalizedPath, descend?: (directory: NormalizedPath) => boolean): AsyncGenerator<readonly SearchEntry[]> {
    let kind: DriverEntryKind | undefined;
    try {
      kind = await this.kind(base);
    } catch (error) {
      if (cannotExist(error)) return;
      throw error;
    }
    if (kind === 'file' || kind === 'symlink') {
      if (kind === 'file' || (await this.linkIsFile(base))) yield [{ path: base, isFile: true, isLink: kind === 'symlink' }];
      return;
    }
    if (kind === undefined) return;
    for await (const batch of walkBatches(this.#driver.walk(base), descend)) {
      // Indexed, not `for...of`: this loop runs inside a generator V8 does not optimise, where each step of
      // an array iterator allocates a result object (one per entry of a 100k-file grep).
      // Sized up front: one entry for each of the batch's, where growing it by `push` reallocated it as it went.
      const entries = new Array<SearchEntry>(batch.length);
      for (let index = 0; index < batch.length; index += 1) {
        const { path, kind: entryKind } = batch[index] as DriverWalkEntry;
        const isLink = entryKind === 'symlink';
        entries[index] = { path, isFile: entryKind === 'file' || (isLink && (await this.linkIsFile(path))), isLink };
      }
      yield entries;
    }
  }

  async linkIsFile(path: NormalizedPath): Promise<boolean> {
    return (await this.statFound(path).catch(() => undefined))?.isFile === true;
  }

  /** ENOTDIR when a file stands where a directory on the way to `path` should be. */
  async assertNoFileAbove(path: NormalizedPath): Promise<void> {
    const segments = splitPath(path);
    for (let depth = 1; depth < segments.length; depth += 1) {
      const ancestor = segments.slice(0, depth).join('/');
      const kind = await this.kind(ancestor);
      if (kind === 'file') throw new NotADirectoryError(ancestor, `not a directory: ${ancestor} is a file`);
      if (kind === undefined) return;
    }
  }

  /** `task`'s result, its failure explained (a driver's errors as workspace errors); one promise, not two. */
  call<T>(path: NormalizedPath, task: () => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      running = Promise.resolve(task());
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.then(undefined, async (error: unknown) => {
      throw await this.explain(error, path);
    });
  }

  /** What is at `path`; `undefined` when nothing is, or when the name is too long for anything to be. */
  kind(path: NormalizedPath): Promise<DriverEntryKind | undefined> {
    if (path === '') return Promise.resolve('directory');
    // Not an async function: it runs before every read and mutation, and each await is a step of its own.
    let asked: Promise<DriverEntryKind | undefined>;
    try {
      asked = Promise.resolve(this.#driver.kind(path));
    } catch (error) {
      asked = Promise.reject(error);
    }
    return asked.then(undefined, async (error: unknown) => {
      if (fromDriverError(error, path) instanceof NameTooLongError) return undefined;
      throw await this.explain(error, path);
    });
  }

  /** The driver's stat of a path checked to exist first (missing: ENOENT, or ENOTDIR below a file). */
  async stat(path: NormalizedPath): Promise<DriverStat> {
    await this.#existing(path);
    return this.statFound(path);
  }

  /** The driver's stat of a path `kind()` has just found: its precondition holds without asking again. */
  statFound(path: NormalizedPath): Promise<DriverStat> {
    return this.call(path, () => this.#driver.stat(path));
  }

  /** The driver's bytes of a file, the file checked first (see `expectFile`): the driver only reads what is there. */
  readFile(path: NormalizedPath, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    const read = () => this.call(path, () => this.#driver.readFile(path, range));
    // Every read of a small file comes here: a plain file costs one kind() and no further step.
    return this.kind(path).then((kind) => (kind === 'file' ? read() : this.expectFile(path, kind).then(read)));
  }

  /**
   * What every read checks before the driver sees it: a file, or a link to one inside the root. Missing
   * (a dangling link included) is ENOENT, or ENOTDIR below a file; a directory is EISDIR; a link leaving
   * the root is EACCES.
   */
  async expectFile(path: NormalizedPath, known?: DriverEntryKind): Promise<void> {
    if (path === '') throw new IsADirectoryError('/');
    const kind = known ?? (await this.#existing(path));
    if (kind === 'directory') throw new IsADirectoryError(displayPath(path));
    if (kind !== 'symlink') return;
    const resolved = await this.statFound(path);
    if (resolved.isDirectory) throw new IsADirectoryError(displayPath(path));
    if (!resolved.isFile) throw new FileNotFoundError(displayPath(path));
  }

  async #existing(path: NormalizedPath): Promise<DriverEntryKind> {
    const kind = await this.kind(path);
    if (kind === undefined) throw await this.explain(new FileNotFoundError(displayPath(path)), path);
    return kind;
  }

  /** A directory, or a link to one inside the root. */
  async isDirectory(path: NormalizedPath): Promise<boolean> {
    const kind = await this.kind(path);
    if (kind !== 'symlink') return kind === 'directory';
    // A link leaving the root is refused (EACCES), not taken for "not a directory".
    const resolved = await this.statFound(path).catch((error: WorkspaceError) => {
      if (error instanceof FileNotFoundError || error instanceof NotADirectoryError) return undefined;
      throw error;
    });
    return resolved?.isDirectory === true;
  }

  /** Maps a driver error; a "missing" path below a file is reported as ENOTDIR, as a disk would. */
  async explain(error: unknown, path: NormalizedPath): Promise<WorkspaceError> {
    const found = fromDriverError(error, path);
    // Only lookups come here: a name too long to exist is not found (creations map their own errors: EFBIG).
    const mapped = found instanceof NameTooLongError ? new FileNotFoundError(displayPath(path)) : found;
    if (!(mapped instanceof FileNotFoundError)) return mapped;
    try {
      await this.assertNoFileAbove(path);
    } catch (blocked) {
      if (blocked instanceof NotADirectoryError) return blocked;
    }
    return mapped;
  }

  /** `exists` for a normalised path, as Node's `existsSync`: a link counts only when it resolves to something inside the root. */
  async exists(target: NormalizedPath): Promise<boolean> {
    try {
      const kind = await this.kind(target);
      if (kind !== 'symlink') return kind !== undefined;
      return !isUnresolved(await this.statFound(target));
    } catch (error) {
      if (error instanceof PathEscapeError || cannotExist(error)) return false;
      throw error;
    }
  }

  /** The protocol's stat: the driver's, with the path (and only the fields the driver gave). */
  async statResult(target: NormalizedPath): Promise<StatResult> {
    const st = await this.stat(target);
    const result: StatResult = {
      path: displayPath(target),
      isFile: st.isFile,
      isDirectory: st.isDirectory,
      isSymlink: st.isSymlink,
      executable: st.isFile && st.executable === true,
      sizeBytes: st.sizeBytes,
    };
    if (st.isSymlink) result.linkTarget = await this.readlink(target);
    if (st.createdAt !== undefined) result.createdAt = st.createdAt;
    if (st.modifiedAt !== undefined) result.modifiedAt = st.modifiedAt;
    if (st.mimeType !== undefined) result.mimeType = st.mimeType;
    if (st.version !== undefined) result.version = st.version;
    return result;
  }

  /** The target text of the link at `target` (not followed): EINVAL when it is not a link, ENOTSUP when the driver cannot say. */
  async readlink(target: NormalizedPath): Promise<string> {
    const kind = await this.kind(target);
    const shown = displayPath(target);
    if (kind === undefined) throw await this.explain(new FileNotFoundError(shown), target);
    if (kind !== 'symlink') throw new InvalidArgumentError(`not a symlink: ${shown}`, shown);
    const driver = this.#driver;
    if (driver.readlink === undefined) throw new NotSupportedError(`the ${driver.name} backend cannot read symlinks: ${shown}`, shown);
    return this.call(target, () => (driver.readlink as (path: string) => Promise<string>).call(driver, target));
  }

  /** The protocol's list: sorted by name; a link as what it resolves to inside the root, one leaving it by name only. */
  async listEntries(target: NormalizedPath): Promise<ListEntry[]> {
    if (!(await this.isDirectory(target))) {
      if ((await this.kind(target)) === undefined) throw await this.explain(new FileNotFoundError(displayPath(target)), target);
      throw new NotADirectoryError(displayPath(target));
    }
    const children = await this.call(target, () => this.#driver.list(target));
    const entries = await Promise.all(
      children.map(async ({ name, kind }): Promise<ListEntry> => {
        const childPath = joinPath(target, name);
        const entry = { name, path: displayPath(childPath), isFile: kind === 'file', isDirectory: kind === 'directory', isSymlink: false };
        if (kind !== 'symlink') return entry;
        const resolved = await this.statFound(childPath).catch(() => undefined);
        return { ...entry, isFile: resolved?.isFile === true, isDirectory: resolved?.isDirectory === true, isSymlink: true };
      }),
    );
    return entries.sort((a, b) => compareStrings(a.name, b.name));
  }

  /**
   * What a write finds at its target: `missing`, `existing` (a file, or a link to one inside the root), or
   * `dangling` (a link the driver must resolve, and refuse when it leads outside). A directory is EISDIR.
   */
  /**
   * `ifVersion` compare-and-swap, called under the path's lock with `writeTarget`'s answer: the write goes on
   * only when the file exists and its `stat().version` is `expected`. A backend that keeps no versions never
   * matches (the conflict says so) rather than writing blind.
   */
  async assertVersion(target: NormalizedPath, state: 'missing' | 'existing' | 'dangling', expected: number): Promise<void> {
    const shown = displayPath(target);
    if (state !== 'existing') throw new ConflictError(`${shown} does not exist, expected version ${expected}; nothing was written`, shown);
    const actual = (await this.stat(target)).version;
    if (actual === expected) return;
    const found = actual === undefined ? 'has no version (this backend keeps none)' : `is at version ${actual}`;
    throw new ConflictError(`${shown} ${found}, expected version ${expected}; nothing was written`, shown);
  }

  async writeTarget(target: NormalizedPath): Promise<'missing' | 'existing' | 'dangling'> {
    const kind = await this.kind(target);
    if (kind === 'directory') throw new IsADirectoryError(displayPath(target));
    if (kind === undefined) return 'missing';
    if (kind === 'file') return 'existing';
    const resolved = await this.#resolveLink(target);
    if (resolved?.isDirectory === true) throw new IsADirectoryError(displayPath(target));
    return resolved === undefined || isUnresolved(resolved) ? 'dangling' : 'existing';
  }

  /**
   * Whether the parent of a path about to be created is a directory (or a link the driver resolves);
   * false when it is missing; ENOTDIR when a file stands there.
   */
  async parentReady(target: NormalizedPath): Promise<boolean> {
    const parent = parentPath(target);
    const kind = await this.kind(parent);
    if (kind === 'directory') return true;
    if (kind === 'symlink') {
      const resolved = await this.#resolveLink(parent);
      if (resolved === undefined || resolved.isDirectory || isUnresolved(resolved)) return true;
    }
    if (kind !== undefined) throw new NotADirectoryError(displayPath(parent), `not a directory: ${displayPath(parent)} is a file`);
    return false;
  }

  /** A link's target as the driver resolves it; undefined when dangling; EACCES when it leaves the root. */
  #resolveLink(path: NormalizedPath): Promise<DriverStat | undefined> {
    return this.statFound(path).catch((error: WorkspaceError) => {
      if (error instanceof FileNotFoundError) return undefined;
      throw error;
    });
  }
}

/** A lookup that found nothing: missing (a name too long for the store included, see `explain`) or below a file. */
function cannotExist(error: unknown): boolean {
  return error instanceof FileNotFoundError || error instanceof NotADirectoryError;
}

/** How drivers report a link they could not follow (dangling inside the root): the link itself. */
export function isUnresolved(stat: DriverStat): boolean {
  return stat.isSymlink && !stat.isFile && !stat.isDirectory;
}
