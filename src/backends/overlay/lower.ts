import * as fs from 'node:fs';
import type { DriverEntryKind, DriverListEntry, DriverWalkEntry } from '../../workspace/driver.js';
import { ConflictError, FileNotFoundError, InvalidArgumentError, IsADirectoryError } from '../../workspace/errors.js';
import { baseName, displayPath, parentPath, splitPath, type NormalizedPath } from '../../workspace/paths.js';
import { listPinned } from '../../host-files/list.js';
import { excludeMatcher, isVisibleName } from '../../host-files/names.js';
import { hostError, PIN_DIRECTORIES, pinDirectory, type PinnedDir, type Sandbox } from '../../host-files/sandbox.js';
import { pinSearchDirectory, walkTree } from '../../host-files/walk.js';
import { READ_FLAGS, readRangeAt } from '../../host-files/read-range.js';

/** Which lower paths the overlay shows: picomatch globs (`dot: true`) on root-relative paths. */
export interface LowerFilter {
  /** Hidden, with everything below a matching directory. */
  exclude?: readonly string[];
  /** When given, only files and links matching one of these show (directories always do). */
  include?: readonly string[];
}

/** An entry of the lower directory, seen without following a final link. */
export interface LowerEntry {
  kind: DriverEntryKind;
  stat: fs.Stats;
}

/** Whether a lower file has an execute bit (git's 100755). */
export function lowerExecutable(stat: fs.Stats): boolean {
  return (stat.mode & 0o111) !== 0;
}

/** What identifies the version of a lower file the session read; any change means the file changed on disk. */
interface Fingerprint {
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
}

/**
 * The overlay's lower layer: a host directory, read through the host backend's sandbox and never written.
 * Every read opens without following a final link and checks the opened descriptor is the expected entry
 * inside the root (as the host backend does); listings go through a pinned directory. The first read of
 * a file records its fingerprint (size, times, inode); a later read or stat that finds it different raises
 * `ConflictError`: a file the session has seen is never silently replaced by what another process wrote.
 */
export class LowerLayer {
  readonly sandbox: Sandbox;
  readonly #excluded: ((rel: string) => boolean) | undefined;
  readonly #included: ((rel: string) => boolean) | undefined;
  readonly #seen = new Map<NormalizedPath, Fingerprint>();
  /** Directories holding a file in `#seen`: never handed to search workers, whose reads are not checked. */
  readonly #seenDirectories = new Set<NormalizedPath>();

  constructor(sandbox: Sandbox, filter: LowerFilter = {}) {
    this.sandbox = sandbox;
    this.#excluded = excludeMatcher(filter.exclude);
    this.#included = excludeMatcher(filter.include);
  }

  /** Whether the filter hides `rel` (an excluded ancestor hides it too). */
  hides(rel: NormalizedPath, kind: DriverEntryKind): boolean {
    if (this.#excluded !== undefined) {
      const segments = splitPath(rel);
      for (let depth = 1; depth <= segments.length; depth += 1) if (this.#excluded(segments.slice(0, depth).join('/'))) return true;
    }
    return kind !== 'directory' && this.#included !== undefined && !this.#included(rel);
  }

  /**
   * The entry at `rel`, links not followed. `verifiedDepth`: how many leading components the caller has not
   * itself seen to be real lower directories (they were directories of the upper layer): those are checked
   * here, so a lower directory swapped for a link since is never looked through.
   */
  entry(rel: NormalizedPath, uncheckedDepth: number): LowerEntry | undefined {
    if (rel === '') return { kind: 'directory', stat: this.#lstat('') as fs.Stats };
    if (!isVisibleName(baseName(rel))) return undefined;
    if (uncheckedDepth > 0) {
      const prefix = this.sandbox.abs(splitPath(rel).slice(0, uncheckedDepth).join('/'));
      let real: string | undefined;
      try {
        real = fs.realpathSync.native(prefix);
      } catch {
        real = undefined;
      }
      if (real !== prefix) return undefined;
    }
    const stat = this.#lstat(rel);
    if (stat === undefined) return undefined;
    const kind: DriverEntryKind = stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'directory' : 'file';
    return this.hides(rel, kind) ? undefined : { kind, stat };
  }

  #lstat(rel: NormalizedPath): fs.Stats | undefined {
    try {
      return fs.lstatSync(this.sandbox.abs(rel));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw hostError(error, rel);
    }
  }

  readlink(rel: NormalizedPath): string {
    try {
      return fs.readlinkSync(this.sandbox.abs(rel));
    } catch (error) {
      throw hostError(error, rel);
    }
  }

  /** Children of the real lower directory `rel`, read through a verified descriptor, filtered. */
  async list(rel: NormalizedPath): Promise<DriverListEntry[]> {
    let pin: PinnedDir;
    try {
      pin = pinDirectory(this.sandbox, rel, rel);
    } catch (error) {
      if (error instanceof FileNotFoundError) return [];
      throw error;
    }
    try {
      const entries = await listPinned(pin);
      return entries.filter((entry) => !this.hides(rel === '' ? entry.name : `${rel}/${entry.name}`, entry.kind));
    } catch (error) {
      throw hostError(error, rel);
    } finally {
      pin.release();
    }
  }

  /** Every visible entry below the real lower directory `rel`, never through a link. */
  async *walk(rel: NormalizedPath): AsyncGenerator<DriverWalkEntry> {
    // The walk lists parents before children: a hidden directory hides what is below it.
    const hidden = new Set<NormalizedPath>();
    for await (const entry of walkTree(this.sandbox, rel)) {
      if (hidden.has(parentPath(entry.path)) || this.hides(entry.path, entry.kind)) {
        if (entry.kind === 'directory') hidden.add(entry.path);
        continue;
      }
      yield entry;
    }
  }

  /** Pins a lower directory for the search workers, unless it holds a file the session read (whose reads are checked). */
  pin(rel: NormalizedPath): PinnedDir | undefined {
    return this.#seenDirectories.has(rel) ? undefined : pinSearchDirectory(this.sandbox, rel);
  }

  /** Pins the lower directory at exactly `rel` (no link on the way), or `undefined`; as `pin` otherwise. */
  pinExactly(rel: NormalizedPath): PinnedDir | undefined {
    if (this.#seenDirectories.has(rel) || !PIN_DIRECTORIES) return undefined;
    try {
      return pinDirectory(this.sandbox, rel, rel);
    } catch {
      return undefined;
    }
  }

  /** Bytes of the regular file at the real path `rel`, checked against what the session read before. */
  async readFile(rel: NormalizedPath, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    const shown = displayPath(rel);
    const abs = this.sandbox.abs(rel);
    // Opened, checked and (when small) read without thread-pool round trips: see `readRangeAt`.
    let fd: number;
    try {
      fd = fs.openSync(abs, READ_FLAGS);
    } catch (error) {
      throw hostError(error, rel);
    }
    try {
      this.sandbox.verifyDescriptorSync(fd, abs, shown);
      const stat = fs.fstatSync(fd, { bigint: true });
      if (stat.isDirectory()) throw new IsADirectoryError(shown);
      if (!stat.isFile()) throw new InvalidArgumentError(`not a regular file: ${shown}`, shown);
      this.#check(rel, stat, true);
      return await readRangeAt(fd, Number(stat.size), range);
    } catch (error) {
      throw hostError(error, rel);
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Records the version of a lower file (or link, or every one below a directory) that the session is about
   * to replace or delete, unless one is recorded already: a write-back later finds a change made on disk
   * since then as a conflict instead of overwriting it.
   */
  async remember(rel: NormalizedPath, kind: DriverEntryKind): Promise<void> {
    if (kind !== 'directory') {
      this.#remember(rel);
      return;
    }
    for await (const entry of this.walk(rel)) if (entry.kind !== 'directory') this.#remember(entry.path);
  }

  #remember(rel: NormalizedPath): void {
    if (this.#seen.has(rel)) return;
    try {
      this.#check(rel, fs.lstatSync(this.sandbox.abs(rel), { bigint: true }), true);
    } catch {
      // gone meanwhile: nothing to protect
    }
  }

  /** Raises `ConflictError` when a file the session read has changed on disk since. */
  checkUnchanged(rel: NormalizedPath): void {
    if (!this.#seen.has(rel)) return;
    let stat: fs.BigIntStats;
    try {
      stat = fs.lstatSync(this.sandbox.abs(rel), { bigint: true });
    } catch {
      throw changedOnDisk(rel);
    }
    this.#check(rel, stat, false);
  }

  #check(rel: NormalizedPath, stat: fs.BigIntStats, record: boolean): void {
    const now: Fingerprint = { size: Number(stat.size), mtimeNs: stat.mtimeNs, ctimeNs: stat.ctimeNs, ino: stat.ino };
    const before = this.#seen.get(rel);
    if (before === undefined) {
      if (!record) return;
      this.#seen.set(rel, now);
      this.#seenDirectories.add(parentPath(rel));
      return;
    }
    if (before.size !== now.size || before.mtimeNs !== now.mtimeNs || before.ctimeNs !== now.ctimeNs || before.ino !== now.ino)
      throw changedOnDisk(rel);
  }
}

function changedOnDisk(rel: NormalizedPath): ConflictError {
  const shown = displayPath(rel);
  return new ConflictError(
    `${shown} changed on disk after this session read it; the overlay never mixes two versions of a file (open a new session to see the new one)`,
    shown,
  );
}
