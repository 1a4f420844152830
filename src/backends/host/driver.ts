import * as fs from 'node:fs';
import type {
  BackendDriver,
  DriverBulkEntry,
  DriverEntryKind,
  DriverFileHandle,
  DriverListEntry,
  DriverStagedFile,
  DriverStat,
  DriverWalkEntry,
  DriverWriteOptions,
  Snapshotter,
} from '../../workspace/driver.js';
import {
  FileExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  InvalidPathError,
  IsADirectoryError,
  NotADirectoryError,
} from '../../workspace/errors.js';
import { baseName, displayPath, joinPath, parentPath, type NormalizedPath } from '../../workspace/paths.js';
import type { WriteMode } from '../../workspace/types.js';
import { placeFile, replaceSymlinkSync } from './atomic.js';
import { isTempName } from '../../host-files/names.js';
import { writeEntries } from './bulk-write.js';
import { hostFileVersion, type ChangeTracker } from './changes.js';
import type { ChangeDetection } from './git-snapshotter.js';
import { copyDirectory, copyLeaf } from './copy.js';
import { listPinned } from '../../host-files/list.js';
import { removeAt } from '../../host-files/remove-at.js';
import { hostError, pinChild, pinDirectory, type PinnedDir, type Resolved, type Sandbox } from '../../host-files/sandbox.js';
import { pinSearchDirectory, walkTree } from '../../host-files/walk.js';
import { statFromHost } from '../../host-files/stat.js';
import { newFileMode, openNoFollow, withExecutable } from '../../host-files/file-mode.js';
import { fileHandle, HostStagedFile, openVerified, readVerified } from './streams.js';

/** What `hostDriver()` made for a driver: its locations, options and lifecycle (factory.ts). */
export interface HostResources {
  readonly gitDir: string;
  readonly changeDetection: ChangeDetection;
  readonly exclude: readonly string[];
  readonly tempFilesSwept: Promise<string[]>;
  lastHashedCount(): number;
  /** A workspace was built on the driver: start the temp-file sweep unless it is read-only. */
  attach(readOnly: boolean): void;
  fork(): Promise<HostDriver>;
  /** Removes what the driver created (an owned root and git dir) and returns borrowed git dirs. */
  release(): Promise<void>;
}

/** The driver's methods that change the root. */
const CHANGES = ['writeFiles', 'commitStaged', 'writeFile', 'setExecutable', 'symlink', 'mkdir', 'remove', 'move', 'copy'] as const;

/**
 * The host backend's driver: a real directory, sandboxed to it. Every path is resolved component by
 * component inside the root (see `Sandbox`); reads verify the opened descriptor and mutations act through a
 * pinned parent directory, so a component swapped for a link meanwhile cannot lead outside. Writes are
 * atomic (temp file + rename) and keep the permission bits of a file they replace (but the executable bit
 * when asked: see `withExecutable`). Links are created as given and never followed out of the root. Every real path a
 * primitive touches is reported to the `ChangeTracker`, so a `tracked` workspace snapshots in O(changes).
 */
export class HostDriver implements BackendDriver {
  readonly name = 'host';
  readonly root: string;
  readonly snapshots: Snapshotter | undefined;
  readonly #sandbox: Sandbox;
  readonly #changes: ChangeTracker;
  readonly #resources: HostResources;
  readonly #staged = new Set<HostStagedFile>();

  /** Made by `hostDriver()` (factory.ts), which owns the locations `resources` releases. */
  constructor(sandbox: Sandbox, changes: ChangeTracker, snapshots: Snapshotter | undefined, resources: HostResources) {
    this.root = sandbox.root;
    this.#sandbox = sandbox;
    this.#changes = changes;
    this.snapshots = snapshots;
    this.#resources = resources;
    // Each change is known to the tracker while it runs: a snapshot's scan waits for those under way.
    for (const name of CHANGES) {
      const change = this[name] as (...args: unknown[]) => Promise<void>;
      this[name] = ((...args: unknown[]) => changes.during(() => change.apply(this, args))) as never;
    }
  }

  /** The real path of the snapshot repository. */
  get gitDir(): string {
    return this.#resources.gitDir;
  }

  get changeDetection(): ChangeDetection {
    return this.#resources.changeDetection;
  }

  get exclude(): readonly string[] {
    return this.#resources.exclude;
  }

  /**
   * The sweep a workspace built on a given root starts (in the background, not on a read-only workspace):
   * temp files of atomic writes left by writers killed mid-write (`kill -9`) are removed, never a live
   * writer's (see docs/reliability.md). Resolves, once a workspace is built on the driver, with the
   * workspace paths removed; never rejects.
   */
  get tempFilesSwept(): Promise<string[]> {
    return this.#resources.tempFilesSwept;
  }

  /** Files hashed by the last snapshot, restore or live diff (instrumentation for tests and the bench). */
  get lastHashedCount(): number {
    return this.#resources.lastHashedCount();
  }

  attach(workspace: { readonly readOnly: boolean }): void {
    this.#resources.attach(workspace.readOnly);
  }

  /** A copy of the root with the same history (see factory.ts). */
  fork(): Promise<HostDriver> {
    return this.#resources.fork();
  }

  /** Paths another process changed (all of them when omitted): a `tracked` driver's next snapshot looks there. */
  markChanged(paths?: readonly string[]): void {
    this.#changes.mark(paths);
  }

  /** Discards write streams left open (their staged files), then releases what the driver created. */
  async dispose(): Promise<void> {
    await Promise.all([...this.#staged].map((staged) => staged.discard()));
    return this.#resources.release();
  }

  /** Hydration's fast path: see `writeEntries`. */
  writeFiles(entries: readonly DriverBulkEntry[]): Promise<void> {
    return writeEntries(this.#sandbox, this.#changes, entries, {
      // As the shared layer's entry-by-entry path: an existing file keeps its bit unless the entry sets it.
      writeFile: (path, content, executable) => this.writeFile(path, content, { mode: 'overwrite', ...(executable ? { executable } : {}) }),
      mkdir: (path) => this.mkdir(path),
      symlink: (target, path) => this.#link(target, path, true),
    });
  }

  reservedName(name: string): string | undefined {
    return isTempName(name) ? "name reserved for the host backend's temporary files" : undefined;
  }

  /** Names shaped like our temp files are hidden from list, walks and snapshots, so nobody may create them. */
  #assertNotReserved(path: NormalizedPath): void {
    for (const segment of path.split('/')) {
      if (isTempName(segment))
        throw new InvalidPathError(
          displayPath(path),
          `invalid path ${JSON.stringify(displayPath(path))}: names of the form .sessionfs-tmp-[<owner>-]<16 hex> are reserved`,
        );
    }
  }

  // ---- primitives -------------------------------------------------------------------------------------

  /**
   * Synchronous lstats (microseconds each on a local disk): a thread-pool round trip per path component
   * was most of a small read's or write's time.
   */
  async #resolve(path: NormalizedPath, followFinal: boolean): Promise<Resolved> {
    try {
      return this.#sandbox.resolveSync(path, followFinal);
    } catch (error) {
      throw hostError(error, path);
    }
  }

  /**
   * For the policy, on every access: synchronous calls (microseconds each on a local disk) instead of a
   * thread-pool round trip per component, which made a policy cost more than the operation it judged. The
   * kernel's realpath first (one call, ~40% cheaper than an lstat per component); when it fails (a missing or
   * dangling path) or leaves the root, the sandbox's own resolution, which the operation itself applies.
   */
  async resolve(path: NormalizedPath): Promise<NormalizedPath> {
    try {
      const real = path === '' ? this.root : fs.realpathSync.native(`${this.root}/${path}`);
      if (real === this.root) return '';
      if (real.startsWith(`${this.root}/`)) return real.slice(this.root.length + 1);
    } catch {
      // resolved below, exactly
    }
    try {
      return this.#sandbox.resolveSync(path, true).rel;
    } catch (error) {
      throw hostError(error, path);
    }
  }

  async readFile(path: NormalizedPath, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    return readVerified(this.#sandbox, await this.#resolve(path, true), path, range);
  }

  /** A read stream's file: the very inode opened now, whatever replaces the path meanwhile. */
  async openFile(path: NormalizedPath): Promise<DriverFileHandle> {
    const { handle, size } = await openVerified(this.#sandbox, await this.#resolve(path, true), path);
    return fileHandle(handle, size);
  }

  /** A write stream's staging file, in the root (see `HostStagedFile`). */
  async stageFile(path: NormalizedPath): Promise<DriverStagedFile> {
    this.#assertNotReserved(path);
    return HostStagedFile.create(pinDirectory(this.#sandbox, '', path), this.#staged);
  }

  async commitStaged(path: NormalizedPath, staged: DriverStagedFile, request: DriverWriteOptions): Promise<void> {
    if (!(staged instanceof HostStagedFile)) throw new InvalidArgumentError('not staged by this workspace', displayPath(path));
    await this.#store(path, request.mode, (dirAbs, targetAbs, existing) =>
      staged.placeAt(dirAbs, targetAbs, request.mode, existing, request.executable),
    );
  }

  async writeFile(path: NormalizedPath, content: Uint8Array, request: DriverWriteOptions): Promise<void> {
    const shown = displayPath(path);
    const { executable } = request;
    await this.#store(path, request.mode, async (dirAbs, targetAbs, existing, abs) => {
      if (request.mode === 'create') {
        if (existing !== undefined) throw new FileExistsError(shown);
        await placeFile(dirAbs, targetAbs, content, newFileMode(executable), 'create');
      } else if (request.mode === 'append' && existing !== undefined) {
        const handle = await fs.promises.open(
          abs,
          fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK,
        );
        try {
          await this.#sandbox.verifyDescriptor(handle.fd, abs, shown);
          const opened = await handle.stat();
          if (!opened.isFile()) throw new InvalidArgumentError(`not a regular file: ${shown}`, shown);
          await handle.writeFile(content);
          if (executable !== undefined) await handle.chmod(withExecutable(opened.mode, executable));
        } finally {
          await handle.close();
        }
      } else {
        // Overwrite keeps the permission bits of the file it replaces (an executable stays executable, unless asked).
        const bits = existing === undefined ? newFileMode(executable) : withExecutable(existing.mode, executable);
        await placeFile(dirAbs, targetAbs, content, bits, 'replace');
      }
    });
  }

  /**
   * Stores a file at `path` (a link followed inside the root) with `put`, which gets the pinned parent
   * directory, the target's path in it, what stands there now, and the target's resolved path.
   */
  async #store(
    path: NormalizedPath,
    mode: WriteMode,
    put: (dirAbs: string, targetAbs: string, existing: fs.Stats | undefined, abs: string) => Promise<void>,
  ): Promise<void> {
    this.#assertNotReserved(path);
    const shown = displayPath(path);
    const target = await this.#resolve(path, true);
    const parent = parentPath(target.rel);
    // The shared layer made the parent; made again here in case it was removed since (never through a link).
    if (target.stat === undefined) await this.#makeDirectories(parent, path);
    else if (target.stat.isDirectory()) throw new IsADirectoryError(shown);
    else if (!target.stat.isFile()) throw new InvalidArgumentError(`not a regular file: ${shown}`, shown);
    if (mode === 'create' && target.stat !== undefined) throw new FileExistsError(shown);
    let pin: PinnedDir | undefined;
    try {
      // The temp file and the rename go through the pinned parent: a parent swapped for a link since the
      // resolution cannot redirect them outside the root.
      pin = pinDirectory(this.#sandbox, parent, path);
      await put(pin.path, pin.at(baseName(target.rel)), target.stat, target.abs);
    } catch (error) {
      throw hostError(error, path);
    } finally {
      pin?.release();
      this.#changes.touched(target.rel);
    }
  }

  /**
   * Creates the real directory `rel` and its missing parents, one component at a time, each inside the
   * pinned directory above it (never through a link).
   */
  async #makeDirectories(rel: NormalizedPath, shownPath: NormalizedPath): Promise<void> {
    if (rel === '') return;
    let current = '';
    let pin = pinDirectory(this.#sandbox, '', shownPath);
    try {
      for (const name of rel.split('/')) {
        current = joinPath(current, name);
        const abs = pin.at(name);
        try {
          fs.mkdirSync(abs);
          this.#changes.touched(current);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw hostError(error, shownPath);
          let st: fs.Stats;
          try {
            st = fs.lstatSync(abs);
          } catch (lstatError) {
            throw hostError(lstatError, shownPath);
          }
          if (st.isSymbolicLink()) {
            // Planted after resolution: resolve again through the sandbox.
            const again = await this.#resolve(current, true);
            if (again.stat?.isDirectory() !== true) throw new NotADirectoryError(displayPath(shownPath));
            const rest = rel.slice(current.length + 1);
            pin.release();
            pin = pinDirectory(this.#sandbox, '', shownPath);
            await this.#makeDirectories(rest === '' ? again.rel : joinPath(again.rel, rest), shownPath);
            return;
          }
          if (!st.isDirectory()) throw new NotADirectoryError(displayPath(shownPath));
        }
        const child = pinChild(pin, name, shownPath);
        pin.release();
        pin = child;
      }
    } finally {
      pin.release();
    }
  }

  async kind(path: NormalizedPath): Promise<DriverEntryKind | undefined> {
    let target: Resolved;
    try {
      target = await this.#resolve(path, false);
    } catch (error) {
      // A file in the parent chain: the path does not exist (the operation reports ENOTDIR itself).
      if (error instanceof NotADirectoryError) return undefined;
      throw error;
    }
    const st = target.stat;
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) return 'symlink';
    if (st.isDirectory()) return 'directory';
    return 'file';
  }

  async stat(path: NormalizedPath): Promise<DriverStat> {
    const shown = displayPath(path);
    const entry = await this.#resolve(path, false);
    if (entry.stat === undefined) throw new FileNotFoundError(shown);
    const isSymlink = entry.stat.isSymbolicLink();
    const target = isSymlink ? await this.#resolve(path, true) : entry;
    // A dangling link (inside the root) is reported as the link itself.
    const st = target.stat ?? entry.stat;
    const isFile = st.isFile();
    return statFromHost(path, st, isFile, isSymlink, isFile ? hostFileVersion(st, this.#changes.stamps.latest(target.rel)) : 0);
  }

  async list(path: NormalizedPath): Promise<DriverListEntry[]> {
    const shown = displayPath(path);
    const dir = await this.#resolve(path, true);
    if (dir.stat === undefined) throw new FileNotFoundError(shown);
    if (!dir.stat.isDirectory()) throw new NotADirectoryError(shown);
    // Listed through a verified descriptor: a directory swapped for a link since the resolution is refused.
    const pin = pinDirectory(this.#sandbox, dir.rel, path);
    try {
      return await listPinned(pin);
    } catch (error) {
      throw hostError(error, path);
    } finally {
      pin.release();
    }
  }

  walk(base: NormalizedPath): AsyncIterable<DriverWalkEntry> {
    return walkTree(this.#sandbox, base);
  }

  pinSearchDirectory(path: NormalizedPath): PinnedDir | undefined {
    return pinSearchDirectory(this.#sandbox, path);
  }

  /**
   * chmod of the file a path resolves to (a link followed inside the root), through a descriptor opened in
   * its pinned directory without following: a name swapped for a link meanwhile is refused, never followed.
   */
  async setExecutable(path: NormalizedPath, executable: boolean): Promise<void> {
    const shown = displayPath(path);
    const target = await this.#resolve(path, true);
    if (target.stat === undefined) throw new FileNotFoundError(shown);
    if (target.stat.isDirectory()) throw new IsADirectoryError(shown);
    let pin: PinnedDir | undefined;
    let fd: number | undefined;
    try {
      pin = pinDirectory(this.#sandbox, parentPath(target.rel), path);
      fd = openNoFollow(pin.at(baseName(target.rel)));
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new InvalidArgumentError(`not a regular file: ${shown}`, shown);
      const bits = withExecutable(st.mode, executable);
      if (bits !== (st.mode & 0o7777)) fs.fchmodSync(fd, bits);
    } catch (error) {
      throw hostError(error, path);
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
      pin?.release();
      this.#changes.touched(target.rel);
    }
  }

  /** A new link holding `target` as given (nothing is resolved): `symlink(2)` in the pinned parent, exclusive and atomic. */
  symlink(target: string, path: NormalizedPath): Promise<void> {
    return this.#link(target, path, false);
  }

  /**
   * Puts a link at `path` (its parent directories followed inside the root, its own name never): created
   * exclusively, or, when `replace`, put over a file or link standing there (a temp link renamed over it);
   * a directory there is EISDIR.
   */
  async #link(linkTarget: string, path: NormalizedPath, replace: boolean): Promise<void> {
    this.#assertNotReserved(path);
    const shown = displayPath(path);
    const at = await this.#resolve(path, false);
    if (at.stat !== undefined && !replace) throw new FileExistsError(shown);
    if (at.stat?.isDirectory() === true) throw new IsADirectoryError(shown);
    const parent = parentPath(at.rel);
    if (at.stat === undefined) await this.#makeDirectories(parent, path);
    let pin: PinnedDir | undefined;
    try {
      pin = pinDirectory(this.#sandbox, parent, path);
      const abs = pin.at(baseName(at.rel));
      if (at.stat === undefined) fs.symlinkSync(linkTarget, abs);
      else replaceSymlinkSync(pin.path, abs, linkTarget);
    } catch (error) {
      throw hostError(error, path);
    } finally {
      pin?.release();
      this.#changes.touched(at.rel);
    }
  }

  /** The target text of the link at `path`, read in its pinned directory. */
  async readlink(path: NormalizedPath): Promise<string> {
    const at = await this.#resolve(path, false);
    if (at.stat === undefined) throw new FileNotFoundError(displayPath(path));
    let pin: PinnedDir | undefined;
    try {
      pin = pinDirectory(this.#sandbox, parentPath(at.rel), path);
      return fs.readlinkSync(pin.at(baseName(at.rel)));
    } catch (error) {
      throw hostError(error, path);
    } finally {
      pin?.release();
    }
  }

  async mkdir(path: NormalizedPath): Promise<void> {
    this.#assertNotReserved(path);
    const target = await this.#resolve(path, true);
    if (target.stat !== undefined) {
      if (target.stat.isDirectory()) return;
      throw new FileExistsError(displayPath(path));
    }
    await this.#makeDirectories(target.rel, path);
  }

  async remove(path: NormalizedPath, options: { recursive: boolean }): Promise<void> {
    const target = await this.#resolve(path, false);
    if (target.stat === undefined) throw new FileNotFoundError(displayPath(path));
    if (target.rel === '') throw new InvalidArgumentError('cannot delete the workspace root', '/');
    let pin: PinnedDir | undefined;
    try {
      pin = pinDirectory(this.#sandbox, parentPath(target.rel), path);
      // Without `recursive`, rmdir: a directory holding names the protocol never shows (or a write in flight) is not empty.
      if (target.stat.isDirectory() && !options.recursive) fs.rmdirSync(pin.at(baseName(target.rel)));
      else removeAt(pin, baseName(target.rel), path);
    } catch (error) {
      throw hostError(error, path);
    } finally {
      pin?.release();
      this.#changes.touched(target.rel);
    }
  }

  async move(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    this.#assertNotReserved(to);
    const source = await this.#resolve(from, false);
    if (source.stat === undefined) throw new FileNotFoundError(displayPath(from));
    const target = await this.#resolve(to, false);
    if (target.rel === '' || source.rel === '') throw new InvalidArgumentError('cannot move the workspace root', '/');
    if (target.rel === source.rel) return;
    if (source.stat.isDirectory() && target.rel.startsWith(`${source.rel}/`))
      throw new InvalidArgumentError(`cannot move a directory into itself: ${displayPath(from)} -> ${displayPath(to)}`, displayPath(to));
    await this.#makeDirectories(parentPath(target.rel), to);
    let fromPin: PinnedDir | undefined;
    let toPin: PinnedDir | undefined;
    try {
      fromPin = pinDirectory(this.#sandbox, parentPath(source.rel), from);
      toPin = pinDirectory(this.#sandbox, parentPath(target.rel), to);
      if (target.stat?.isDirectory() === true) removeAt(toPin, baseName(target.rel), to);
      await fs.promises.rename(fromPin.at(baseName(source.rel)), toPin.at(baseName(target.rel)));
    } catch (error) {
      throw hostError(error, to);
    } finally {
      fromPin?.release();
      toPin?.release();
      this.#changes.touched(source.rel, target.rel);
    }
  }

  async copy(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    this.#assertNotReserved(to);
    const source = await this.#resolve(from, false);
    if (source.stat === undefined) throw new FileNotFoundError(displayPath(from));
    const target = await this.#resolve(to, false);
    if (target.rel === '') throw new InvalidArgumentError('cannot copy onto the workspace root', '/');
    if (source.stat.isDirectory() && (target.rel === source.rel || target.rel.startsWith(`${source.rel}/`))) {
      throw new InvalidArgumentError(`cannot copy a directory into itself: ${displayPath(from)} -> ${displayPath(to)}`, displayPath(to));
    }
    await this.#makeDirectories(parentPath(target.rel), to);
    let fromPin: PinnedDir | undefined;
    let toPin: PinnedDir | undefined;
    try {
      fromPin = pinDirectory(this.#sandbox, parentPath(source.rel), from);
      toPin = pinDirectory(this.#sandbox, parentPath(target.rel), to);
      const sourceName = baseName(source.rel);
      const targetName = baseName(target.rel);
      if (source.stat.isDirectory()) {
        if (target.stat !== undefined) removeAt(toPin, targetName, to);
        await copyDirectory(fromPin, sourceName, toPin, targetName, from, to);
      } else {
        await copyLeaf(fromPin.at(sourceName), source.stat, toPin.path, toPin.at(targetName));
      }
    } catch (error) {
      throw hostError(error, to);
    } finally {
      fromPin?.release();
      toPin?.release();
      this.#changes.touched(target.rel);
    }
  }
}
