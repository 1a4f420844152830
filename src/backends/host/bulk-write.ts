import * as fs from 'node:fs';
import type { DriverBulkEntry } from '../../workspace/driver.js';
import { NotADirectoryError, PathEscapeError } from '../../workspace/errors.js';
import { baseName, parentPath, splitPath, type NormalizedPath } from '../../workspace/paths.js';
import { replaceSymlinkSync } from './atomic.js';
import type { ChangeTracker } from './changes.js';
import { newFileMode } from '../../host-files/file-mode.js';
import { hostError, pinChild, pinDirectory, type PinnedDir, type Sandbox } from '../../host-files/sandbox.js';

const CREATE_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
/** Directories kept pinned within one call: files come sorted, so a directory's files are together. */
const PINNED = 32;

/**
 * The host driver's bulk write (`BackendDriver.writeFiles`), for hydration at `cp -r` speed. Writing file by
 * file through `writeFile` costs about fifteen thread-pool round trips each (sandbox resolution, parent
 * checks, a temp file and a rename). A bulk write mostly *creates* files, so this does what `cp` does,
 * synchronously: each parent directory is made and pinned through its own pinned parent (`O_NOFOLLOW`
 * descriptors verified inside the root, as every mutation of this driver is), and each file is created in
 * its pinned directory with `O_CREAT | O_EXCL | O_NOFOLLOW`, so nothing is followed or replaced; a link is
 * made with `symlink(2)` (or renamed over a file or link standing there). A file that already exists, and
 * anything below a link or a file, goes through the driver's own calls (`SlowPath`). A failed write
 * removes the file it created and throws the error, with its real code, for that path.
 */
export async function writeEntries(
  sandbox: Sandbox,
  changes: ChangeTracker,
  entries: readonly DriverBulkEntry[],
  slow: SlowPath,
): Promise<void> {
  const pins = new PinCache(sandbox, changes);
  try {
    for (const entry of entries) {
      if (entry.kind === 'directory') {
        if (pins.directory(entry.path, entry.path) === undefined) await slow.mkdir(entry.path);
        continue;
      }
      const directory = pins.directory(parentPath(entry.path), entry.path);
      if (entry.kind === 'symlink') {
        if (directory === undefined || !placeLink(directory, entry.path, entry.target, changes))
          await slow.symlink(entry.target, entry.path);
      } else if (directory === undefined || !createFile(directory, entry.path, entry.content, entry.executable, changes))
        await slow.writeFile(entry.path, entry.content, entry.executable);
    }
  } finally {
    pins.release();
  }
}

/**
 * The driver's own calls, for whatever is not a plain creation: a file that exists (replaced atomically), a
 * link on the way (followed inside the root, refused with `EACCES` when it leaves it), a file in the way.
 */
export interface SlowPath {
  writeFile(path: NormalizedPath, content: Uint8Array, executable: boolean): Promise<void>;
  mkdir(path: NormalizedPath): Promise<void>;
  /** A link put at `path`, replacing a file or link there (a directory is EISDIR). */
  symlink(target: string, path: NormalizedPath): Promise<void>;
}

/** Creates a new file in `directory`; false when something already stands at its name. */
function createFile(directory: PinnedDir, path: NormalizedPath, content: Uint8Array, executable: boolean, changes: ChangeTracker): boolean {
  const abs = directory.at(baseName(path));
  let fd: number;
  try {
    fd = fs.openSync(abs, CREATE_FLAGS, newFileMode(executable));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw hostError(error, path);
  }
  changes.touched(path);
  try {
    // The umask must not take the owner's execute bit away (git reads that one).
    if (executable) fs.fchmodSync(fd, newFileMode(true));
    let offset = 0;
    while (offset < content.byteLength) offset += fs.writeSync(fd, content, offset, content.byteLength - offset);
  } catch (error) {
    fs.closeSync(fd);
    // Nothing half-written stays behind.
    fs.rmSync(abs, { force: true });
    throw hostError(error, path);
  }
  fs.closeSync(fd);
  return true;
}

/**
 * Puts a link holding `target` (as given) at `path` in `directory`: `symlink(2)`, which never follows
 * anything, or over a file or link standing there, a temp link renamed over it. False when a directory
 * stands there (the slow path says EISDIR).
 */
function placeLink(directory: PinnedDir, path: NormalizedPath, target: string, changes: ChangeTracker): boolean {
  const abs = directory.at(baseName(path));
  try {
    fs.symlinkSync(target, abs);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw hostError(error, path);
    try {
      if (fs.lstatSync(abs).isDirectory()) return false;
      replaceSymlinkSync(directory.path, abs, target);
    } catch (replaceError) {
      throw hostError(replaceError, path);
    } finally {
      changes.touched(path);
    }
    return true;
  }
  changes.touched(path);
  return true;
}

/** Pinned directories by workspace path, made (with their parents) when missing. */
class PinCache {
  readonly #pins = new Map<NormalizedPath, PinnedDir>();

  constructor(
    private readonly sandbox: Sandbox,
    private readonly changes: ChangeTracker,
  ) {}

  /**
   * The pinned directory `path`, made if missing; `undefined` when something else stands on the way (a
   * link, a file). `shown` is the entry an error names.
   */
  directory(path: NormalizedPath, shown: NormalizedPath): PinnedDir | undefined {
    const cached = this.#pins.get(path);
    if (cached !== undefined) return cached;
    let pin: PinnedDir;
    if (path === '') pin = pinDirectory(this.sandbox, '', shown);
    else {
      const parent = this.directory(parentPath(path), shown);
      if (parent === undefined) return undefined;
      const name = splitPath(path).at(-1) as string;
      try {
        fs.mkdirSync(parent.at(name));
        this.changes.touched(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw hostError(error, shown);
      }
      // Opened with O_NOFOLLOW | O_DIRECTORY: a link or a file standing there is for the slow path.
      try {
        pin = pinChild(parent, name, shown);
      } catch (error) {
        if (error instanceof NotADirectoryError || error instanceof PathEscapeError) return undefined;
        throw error;
      }
    }
    if (this.#pins.size >= PINNED) this.release(path === '' ? undefined : '');
    this.#pins.set(path, pin);
    return pin;
  }

  /** Releases every pin (but `keep`). */
  release(keep?: NormalizedPath): void {
    for (const [path, pin] of this.#pins) {
      if (path === keep) continue;
      pin.release();
      this.#pins.delete(path);
    }
  }
}
