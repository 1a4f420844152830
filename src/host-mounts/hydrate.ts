import {
  closeSync,
  constants as fsConstants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  writeSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { basename, join, posix, resolve } from 'node:path';
import picomatch from 'picomatch';
import {
  FileNotFoundError,
  InvalidArgumentError,
  IsADirectoryError,
  LimitExceededError,
  NotADirectoryError,
  PathEscapeError,
  ReadOnlyError,
  SnapshotRestoreError,
  isWorkspaceError,
} from '../workspace/errors.js';
import {
  assertCreatable,
  displayPath,
  fitsLimits,
  isExpressibleName,
  joinPath,
  normalizePath,
  parentPath,
  printable,
  splitPath,
  type NormalizedPath,
} from '../workspace/paths.js';
import type { SnapshotableWorkspace, SkippedPath } from '../workspace/types.js';
import { HostWorkspace, isTempName } from '../backends/host/index.js';
import { MemoryWorkspace } from '../backends/memory/index.js';
import { AllowedRoots } from './allow-list.js';
import { HostMountSchema, type HostMount, type HydrateOptions, type HydrateResult } from './schema.js';

/**
 * Hydration copies allow-listed host folders into a workspace, all or nothing:
 *
 * 1. **Plan.** Every mount is resolved and checked against the allow-list, then walked (names sorted, so the
 *    result is deterministic) into one map of workspace path → file or directory. Later mounts replace
 *    earlier files; directories merge; a file/directory clash fails here. `maxBytes` is checked as the walk
 *    goes, so an over-budget hydration fails before a single byte is written. Only metadata is held.
 * 2. **Copy.** A snapshot is taken, then files are streamed through the protocol (`writeBytes`) a few at a
 *    time, in path order. Any failure — a workspace error, a file that grew past the budget since the walk,
 *    an abort, a throwing `onProgress` — restores the snapshot before the error is rethrown.
 *
 * Hostile trees: names that cannot be workspace paths, paths over the creation limits, symlinks (unless
 * followed, and then only into the allowed roots), FIFOs, sockets and devices are skipped and reported. A
 * file is opened with `O_NOFOLLOW`, and on Linux through a descriptor of its directory whose real path was
 * checked against the allow-list, so a file or a parent swapped for a link after the walk is not read
 * through (see `SourceOpener`).
 * No error or skipped entry names a host path: mounts are identified by index and workspace path.
 */
export async function hydrate(
  workspace: SnapshotableWorkspace,
  mounts: readonly HostMount[],
  options: HydrateOptions,
): Promise<HydrateResult> {
  if (workspace.readOnly) throw new ReadOnlyError(undefined, 'the workspace is read-only: cannot hydrate it');
  const parsed = HostMountSchema.array().safeParse(mounts);
  if (!parsed.success) {
    throw new InvalidArgumentError(
      `invalid mounts: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'mounts'}: ${issue.message}`).join('; ')}`,
    );
  }
  const allowed = await AllowedRoots.resolve((options as Partial<HydrateOptions> | undefined)?.allowedHostRoots);
  const signal = options.signal;
  signal?.throwIfAborted();

  const plan = new Planner(workspace, allowed, signal);
  for (const [index, mount] of parsed.data.entries()) await plan.addMount(index, mount);

  const files = [...plan.entries].filter((entry): entry is [NormalizedPath, PlannedFile] => entry[1].kind === 'file');
  files.sort((a, b) => compare(a[0], b[0]));
  const leafDirectories = plan.leafDirectories();
  const skipped = plan.skipped;
  if (files.length === 0 && leafDirectories.length === 0) return { files: 0, bytes: 0, skipped: sortSkipped(skipped) };

  signal?.throwIfAborted();
  const before = await workspace.snapshot({ tag: 'before hydration' });
  let written = 0;
  let bytes = 0;
  // Writes in flight, oldest first: a window of them runs at once (the host backend's writes are
  // thread-pool round trips), and progress is reported in path order as each one completes.
  const window: { path: NormalizedPath; size: number; done: Promise<unknown> | undefined }[] = [];
  const report = (path: NormalizedPath, size: number): void => {
    written += 1;
    bytes += size;
    options.onProgress?.({ files: written, bytes, path: displayPath(path) });
    signal?.throwIfAborted();
  };
  const settleOldest = async (): Promise<void> => {
    const oldest = window.shift() as (typeof window)[number];
    if (oldest.done !== undefined) await oldest.done;
    report(oldest.path, oldest.size);
  };
  const direct = DirectHostWriter.for(workspace);
  const opener = new SourceOpener(allowed);
  const outsideSnapshots = new ExcludedTracker(workspace);
  // One reusable read buffer when every write consumes its bytes before the next read (the memory
  // backend copies them, the host fast path writes them at once): no allocation, no GC, per file.
  const copiesOnWrite = workspace instanceof MemoryWorkspace;
  const scratch = copiesOnWrite || direct !== undefined ? { buffer: Buffer.allocUnsafe(64 * 1024) } : undefined;
  try {
    for (const directory of leafDirectories) {
      signal?.throwIfAborted();
      await outsideSnapshots.note(directory);
      await workspace.mkdir(directory, { parents: true, existOk: true });
    }
    const mountBytes = new Map<number, number>();
    const pacer = new Pacer();
    for (const [path, file] of files) {
      signal?.throwIfAborted();
      if (pacer.due()) await pacer.yield();
      const outcome = readSource(file.source, opener, workspace.limits.maxWriteBytes, scratch);
      if ('skip' in outcome) {
        skipped.push({ path: displayPath(path), reason: outcome.skip });
        continue;
      }
      const total = (mountBytes.get(file.mount) ?? 0) + outcome.bytes.byteLength;
      mountBytes.set(file.mount, total);
      const budget = plan.budgets[file.mount];
      if (budget !== undefined && total > budget) {
        throw new LimitExceededError(
          `hydration refused: ${plan.describe(file.mount)} grew past its maxBytes of ${budget} bytes while it was being copied; nothing was written`,
        );
      }
      if (outsideSnapshots.active) await outsideSnapshots.note(path);
      const size = outcome.bytes.byteLength;
      // Written by the time this returns: the host fast path writes synchronously; the memory backend has
      // copied the bytes once its write resolves (so the scratch buffer is free again).
      let stored = direct?.tryWrite(path, outcome.bytes, outcome.executable) === true;
      if (!stored && copiesOnWrite) {
        await workspace.writeBytes(path, outcome.bytes, { mode: 'overwrite', createParents: true });
        stored = true;
      }
      if (stored) {
        if (window.length === 0) report(path, size);
        else window.push({ path, size, done: undefined });
        continue;
      }
      const done = workspace.writeBytes(path, scratch === undefined ? outcome.bytes : outcome.bytes.slice(), {
        mode: 'overwrite',
        createParents: true,
      });
      // Settled later (in order); mark it handled now so a failure is not reported as unhandled meanwhile.
      done.catch(() => undefined);
      window.push({ path, size, done });
      if (window.length >= WRITE_WINDOW) await settleOldest();
    }
    while (window.length > 0) await settleOldest();
    direct?.flush();
    opener.close();
  } catch (error) {
    opener.close();
    // Nothing may land after the restore.
    await Promise.allSettled(window.map((entry) => entry.done ?? DONE));
    direct?.flush();
    try {
      await workspace.restore(before);
      await outsideSnapshots.removeCreated();
    } catch (restoreError) {
      throw new SnapshotRestoreError(
        `hydration failed (${describeError(error)}) and the workspace could not be restored: ${describeError(restoreError)}`,
      );
    }
    throw error;
  }
  return { files: written, bytes, skipped: sortSkipped(skipped) };
}

// ---- planning -------------------------------------------------------------------------------------------

interface PlannedFile {
  kind: 'file';
  /** The real host path to open (for a followed link, its resolved target). */
  source: string;
  mount: number;
}

interface PlannedDirectory {
  kind: 'directory';
  mount: number;
}

type Planned = PlannedFile | PlannedDirectory;

interface MountContext {
  index: number;
  mountPath: NormalizedPath;
  followSymlinks: boolean;
  isIncluded: ((relative: string) => boolean) | undefined;
  isExcluded: (relative: string) => boolean;
  maxBytes: number | undefined;
  /** Bytes planned so far (counted only when there is a budget). */
  bytes: number;
}

type ParsedMount = ReturnType<typeof HostMountSchema.parse>;

const SKIP = {
  symlink: 'symlink (not followed: set followSymlinks to follow links inside the allowed roots)',
  brokenSymlink: 'broken symlink',
  outside: 'symlink target outside the allowed roots',
  cycle: 'symlink cycle',
  invalidName: 'name cannot be a workspace path (control character, backslash, or bytes that are not UTF-8)',
  limits: 'path over the workspace limits (depth or segment length)',
  special: 'not a regular file or directory',
  unreadable: 'unreadable',
  reserved: "name reserved for the host backend's temporary files",
} as const;

class Planner {
  readonly entries = new Map<NormalizedPath, Planned>();
  readonly skipped: SkippedPath[] = [];
  readonly budgets: (number | undefined)[] = [];
  readonly #mountPaths: NormalizedPath[] = [];

  constructor(
    private readonly workspace: SnapshotableWorkspace,
    private readonly allowed: AllowedRoots,
    private readonly signal: AbortSignal | undefined,
  ) {}

  describe(index: number): string {
    return `mount ${index} (at ${displayPath(this.#mountPaths[index] ?? '')})`;
  }

  async addMount(index: number, mount: ParsedMount): Promise<void> {
    const mountPath = normalizePath(mount.mountPath ?? defaultMountPath(mount.hostPath));
    this.#mountPaths[index] = mountPath;
    this.budgets[index] = mount.maxBytes;
    if (mountPath !== '') assertCreatable(mountPath, this.workspace.limits);
    const label = this.describe(index);
    const followSymlinks = mount.followSymlinks === true;

    let link: boolean;
    try {
      link = lstatSync(mount.hostPath).isSymbolicLink();
    } catch {
      throw new FileNotFoundError(displayPath(mountPath), `${label}: the host path does not exist or cannot be read`);
    }
    if (link && !followSymlinks) {
      // The link itself lies somewhere; nothing is read through it.
      this.skipped.push({ path: displayPath(mountPath), reason: `host path is a ${SKIP.symlink}` });
      return;
    }
    let real: string;
    try {
      real = realpathSync.native(mount.hostPath);
    } catch {
      throw new FileNotFoundError(displayPath(mountPath), `${label}: the host path ${link ? 'is a broken symlink' : 'cannot be resolved'}`);
    }
    if (!this.allowed.contains(real)) {
      throw new PathEscapeError(displayPath(mountPath), `${label}: the host path lies outside the allowed host roots`);
    }
    const info = statOrUndefined(real);
    const context: MountContext = {
      index,
      mountPath,
      followSymlinks,
      isIncluded: mount.include === undefined ? undefined : picomatch(mount.include, { dot: true }),
      isExcluded: mount.exclude === undefined || mount.exclude.length === 0 ? () => false : picomatch(mount.exclude, { dot: true }),
      maxBytes: mount.maxBytes,
      bytes: 0,
    };
    if (info?.isFile()) {
      if (mountPath === '') throw new InvalidArgumentError(`${label}: a single-file mount needs a mountPath other than the root`);
      const name = basename(real);
      if (context.isExcluded(name) || (context.isIncluded !== undefined && !context.isIncluded(name))) return;
      this.#budget(context, info.size, mountPath);
      this.#add(mountPath, { kind: 'file', source: real, mount: index });
      return;
    }
    if (!info?.isDirectory()) {
      throw new InvalidArgumentError(`${label}: the host path is not a regular file or directory`, displayPath(mountPath));
    }
    if (mountPath !== '') this.#add(mountPath, { kind: 'directory', mount: index });
    await this.#walk(context, real, '', new Set([real]), new Pacer());
  }

  /** Walks one real directory; `relative` is its path relative to the mount source. */
  async #walk(context: MountContext, realDirectory: string, relative: string, ancestors: Set<string>, pacer: Pacer): Promise<void> {
    this.signal?.throwIfAborted();
    await pacer.maybeYield();
    const workspaceDirectory = relative === '' ? context.mountPath : joinPath(context.mountPath, relative);
    let children: Dirent[];
    try {
      children = readdirSync(realDirectory, { withFileTypes: true });
    } catch {
      this.skipped.push({ path: displayPath(workspaceDirectory), reason: `${SKIP.unreadable} directory` });
      return;
    }
    children.sort((a, b) => compare(a.name, b.name));

    for (const child of children) {
      const item = this.#classify(context, realDirectory, relative, child, ancestors);
      if (item === undefined) continue;
      if (item.kind === 'skip') {
        this.skipped.push({ path: item.path, reason: item.reason });
        continue;
      }
      const workspacePath = joinPath(context.mountPath, item.relative);
      if (item.kind === 'file') {
        this.#budget(context, item.size, workspacePath);
        this.#add(workspacePath, { kind: 'file', source: item.source, mount: context.index });
        continue;
      }
      if (context.isIncluded === undefined || context.isIncluded(item.relative)) {
        this.#add(workspacePath, { kind: 'directory', mount: context.index });
      }
      const nested = new Set(ancestors).add(item.source);
      await this.#walk(context, item.source, item.relative, nested, pacer);
    }
  }

  #classify(
    context: MountContext,
    realDirectory: string,
    relative: string,
    child: Dirent,
    ancestors: Set<string>,
  ):
    | undefined
    | { kind: 'skip'; path: string; reason: string }
    | { kind: 'file'; relative: string; source: string; size: number }
    | { kind: 'directory'; relative: string; source: string } {
    const name = child.name;
    const workspaceDirectory = relative === '' ? context.mountPath : joinPath(context.mountPath, relative);
    if (!isExpressibleName(name)) return { kind: 'skip', path: joinPath(workspaceDirectory, printable(name)), reason: SKIP.invalidName };
    // A host workspace hides (and refuses to create) names shaped like its atomic-write temp files.
    if (this.workspace instanceof HostWorkspace && isTempName(name))
      return { kind: 'skip', path: joinPath(workspaceDirectory, name), reason: SKIP.reserved };
    const childRelative = relative === '' ? name : `${relative}/${name}`;
    if (context.isExcluded(childRelative)) return undefined;
    const workspacePath = joinPath(workspaceDirectory, name);
    const hostPath = join(realDirectory, name);

    let source = hostPath;
    let isDirectory = child.isDirectory();
    let isFile = child.isFile();
    let size: number | undefined;
    if (child.isSymbolicLink()) {
      if (!context.followSymlinks) return { kind: 'skip', path: workspacePath, reason: SKIP.symlink };
      try {
        source = realpathSync.native(hostPath);
      } catch {
        return { kind: 'skip', path: workspacePath, reason: SKIP.brokenSymlink };
      }
      if (!this.allowed.contains(source)) return { kind: 'skip', path: workspacePath, reason: SKIP.outside };
      const target = statOrUndefined(source);
      if (target === undefined) return { kind: 'skip', path: workspacePath, reason: SKIP.brokenSymlink };
      isDirectory = target.isDirectory();
      isFile = target.isFile();
      size = target.size;
      if (isDirectory && ancestors.has(source)) return { kind: 'skip', path: workspacePath, reason: SKIP.cycle };
    } else if (!isFile && !isDirectory) {
      return { kind: 'skip', path: workspacePath, reason: SKIP.special };
    }
    if (isDirectory) {
      if (!fitsLimits(workspacePath, this.workspace.limits)) return { kind: 'skip', path: workspacePath, reason: SKIP.limits };
      return { kind: 'directory', relative: childRelative, source };
    }
    if (!isFile) return { kind: 'skip', path: workspacePath, reason: SKIP.special };
    if (context.isIncluded !== undefined && !context.isIncluded(childRelative)) return undefined;
    if (!fitsLimits(workspacePath, this.workspace.limits)) return { kind: 'skip', path: workspacePath, reason: SKIP.limits };
    if (size === undefined && context.maxBytes !== undefined) {
      // Sizes are only needed up front for a budget; otherwise the copy learns them from the open file.
      try {
        size = lstatSync(hostPath).size;
      } catch {
        return { kind: 'skip', path: workspacePath, reason: SKIP.unreadable };
      }
    }
    return { kind: 'file', relative: childRelative, source, size: size ?? 0 };
  }

  #budget(context: MountContext, size: number, path: NormalizedPath): void {
    if (context.maxBytes === undefined) return;
    context.bytes += size;
    if (context.bytes > context.maxBytes) {
      throw new LimitExceededError(
        `hydration refused: ${this.describe(context.index)} needs more than its maxBytes of ${context.maxBytes} bytes (reached at ${displayPath(path)}); nothing was written`,
        displayPath(path),
      );
    }
  }

  /** Records a planned entry; implicit parents become directories; a file/directory clash fails. */
  #add(path: NormalizedPath, entry: Planned): void {
    // Siblings come one after another: when the parent is already a planned directory, so are its parents.
    const parentOfPath = parentPath(path);
    const segments = parentOfPath === '' || this.entries.get(parentOfPath)?.kind === 'directory' ? [] : splitPath(path);
    let parent = '';
    for (let i = 0; i < segments.length - 1; i += 1) {
      parent = joinPath(parent, segments[i] as string);
      const existing = this.entries.get(parent);
      if (existing === undefined) this.entries.set(parent, { kind: 'directory', mount: entry.mount });
      else if (existing.kind === 'file') this.#clash(parent, existing.mount, entry.mount, 'file');
    }
    const existing = this.entries.get(path);
    if (existing !== undefined) {
      if (existing.kind === 'directory' && entry.kind === 'file') this.#clash(path, existing.mount, entry.mount, 'directory');
      if (existing.kind === 'file' && entry.kind === 'directory') this.#clash(path, existing.mount, entry.mount, 'file');
      if (existing.kind === 'directory') return;
    }
    // A later mount's file replaces an earlier one's.
    this.entries.set(path, entry);
  }

  #clash(path: NormalizedPath, earlier: number, later: number, earlierKind: 'file' | 'directory'): never {
    const who = earlier === later ? this.describe(later) : `${this.describe(later)} and ${this.describe(earlier)}`;
    const message = `hydration refused: ${who} clash at ${displayPath(path)}: one has a ${earlierKind === 'file' ? 'file' : 'directory'}, the other a ${earlierKind === 'file' ? 'directory' : 'file'}; nothing was written`;
    if (earlierKind === 'file') throw new NotADirectoryError(displayPath(path), message);
    throw new IsADirectoryError(displayPath(path), message);
  }

  /** Planned directories with nothing planned below them (the others are created by the writes). */
  leafDirectories(): NormalizedPath[] {
    const parents = new Set<NormalizedPath>();
    for (const path of this.entries.keys()) parents.add(parentPath(path));
    return [...this.entries]
      .filter(([path, entry]) => entry.kind === 'directory' && !parents.has(path))
      .map(([path]) => path)
      .sort(compare);
  }
}

// ---- copying --------------------------------------------------------------------------------------------

/** A source file's bytes and whether any execute bit is set (a host workspace keeps it, as a snapshot does). */
type ReadOutcome = { bytes: Uint8Array; executable: boolean } | { skip: string };

/** How many writes may be in flight at once. */
const WRITE_WINDOW = 16;
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);
const PIN_DIRECTORIES = process.platform === 'linux' && existsSync('/proc/self/fd');

/**
 * Reads one host file whole. Synchronous on purpose: these are a handful of short system calls per file,
 * several times faster than thread-pool round trips; the copy loop yields to the event loop every few
 * milliseconds (see `Pacer`), so aborts and timers still run. One file at a time is held (plus the write
 * window), never the tree.
 */
function readSource(source: string, opener: SourceOpener, maxBytes: number, scratch?: { buffer: Buffer }): ReadOutcome {
  const opened = opener.open(source);
  if (typeof opened !== 'number') return opened;
  const fd = opened;
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { skip: SKIP.special };
    if (info.size > maxBytes) return { skip: `file over the workspace write limit of ${maxBytes} bytes` };
    // The bytes the file has as of `fstat` (what `stat` said when it was opened; a file shrinking meanwhile
    // ends early). A file reporting size 0 may still have content (procfs-like): read it to the end.
    const known = info.size > 0;
    const wanted = known ? info.size : 4096;
    let buffer: Buffer;
    if (scratch === undefined) buffer = Buffer.allocUnsafe(wanted);
    else {
      if (scratch.buffer.length < wanted)
        scratch.buffer = Buffer.allocUnsafe(Math.min(Math.max(wanted, scratch.buffer.length * 2), maxBytes + 1));
      buffer = scratch.buffer;
    }
    const end = known ? info.size : Infinity;
    let length = 0;
    while (length < end) {
      if (length === buffer.length) {
        if (length > maxBytes) return { skip: `file over the workspace write limit of ${maxBytes} bytes` };
        const larger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
        if (scratch !== undefined) scratch.buffer = larger;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxBytes) return { skip: `file over the workspace write limit of ${maxBytes} bytes` };
    return { bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, length), executable: (info.mode & 0o111) !== 0 };
  } catch {
    return { skip: SKIP.unreadable };
  } finally {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

/**
 * Opens planned source files so that what is read is what the walk saw inside the allowed roots, even if
 * the tree changes meanwhile. Every file is opened with `O_NOFOLLOW | O_NONBLOCK` (a file swapped for a
 * link is refused; a FIFO swapped in cannot block). On Linux, each source directory is opened once, the
 * real path of that descriptor is checked against the allow-list, and its files are opened through it
 * (`/proc/self/fd/<dir>/<name>`): a parent swapped for a link after the walk cannot redirect the reads.
 * Elsewhere files are opened by path (the walk's checks only).
 */
class SourceOpener {
  readonly #directories = new Map<string, number | undefined>();

  constructor(private readonly allowed: AllowedRoots) {}

  open(source: string): number | { skip: string } {
    let path = source;
    if (PIN_DIRECTORIES) {
      const slash = source.lastIndexOf('/');
      const directory = slash <= 0 ? '/' : source.slice(0, slash);
      const descriptor = this.#directory(directory);
      if (descriptor === undefined) return { skip: 'moved outside the allowed roots during hydration' };
      path = `/proc/self/fd/${descriptor}/${source.slice(slash + 1)}`;
    }
    try {
      return openSync(path, OPEN_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { skip: 'vanished during hydration' };
      if (code === 'ELOOP') return { skip: 'became a symlink during hydration' };
      return { skip: SKIP.unreadable };
    }
  }

  close(): void {
    for (const descriptor of this.#directories.values()) if (descriptor !== undefined) closeQuietly(descriptor);
    this.#directories.clear();
  }

  /** A verified descriptor of a real directory inside the allowed roots, or undefined. */
  #directory(directory: string): number | undefined {
    if (this.#directories.has(directory)) return this.#directories.get(directory);
    let descriptor: number | undefined;
    try {
      descriptor = openSync(directory, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | (fsConstants.O_NOFOLLOW ?? 0));
      if (!this.allowed.contains(readlinkSync(`/proc/self/fd/${descriptor}`))) {
        closeQuietly(descriptor);
        descriptor = undefined;
      }
    } catch {
      if (descriptor !== undefined) closeQuietly(descriptor);
      descriptor = undefined;
    }
    // Files come sorted, so a directory's files are (nearly always) together: keep a few descriptors.
    if (this.#directories.size >= 16) {
      const [oldest, old] = this.#directories.entries().next().value as [string, number | undefined];
      if (old !== undefined) closeQuietly(old);
      this.#directories.delete(oldest);
    }
    this.#directories.set(directory, descriptor);
    return descriptor;
  }
}

function closeQuietly(descriptor: number): void {
  try {
    closeSync(descriptor);
  } catch {
    // already closed
  }
}

/** Lets the event loop run (aborts, timers, other requests) every few milliseconds of synchronous work. */
class Pacer {
  #last = performance.now();

  due(): boolean {
    return performance.now() - this.#last >= PACE_MS;
  }

  async yield(): Promise<void> {
    await yieldToEventLoop();
    this.#last = performance.now();
  }

  async maybeYield(): Promise<void> {
    if (this.due()) await this.yield();
  }
}

const PACE_MS = 10;

/**
 * A host workspace's `exclude` globs name paths its snapshots leave out and its restores never touch, so a
 * rollback alone would leave hydrated files there. This notes the topmost excluded path each write creates
 * (checked before the write) so that a failed hydration can remove them after the restore.
 */
class ExcludedTracker {
  readonly #isExcluded: ((path: string) => boolean) | undefined;
  readonly #created = new Set<NormalizedPath>();

  /** Whether there is anything to track (the workspace excludes something). */
  get active(): boolean {
    return this.#isExcluded !== undefined;
  }

  constructor(private readonly workspace: SnapshotableWorkspace) {
    const globs = workspace instanceof HostWorkspace ? workspace.exclude : [];
    this.#isExcluded = globs.length === 0 ? undefined : picomatch([...globs], { dot: true });
  }

  async note(path: NormalizedPath): Promise<void> {
    if (this.#isExcluded === undefined) return;
    const segments = splitPath(path);
    let prefix = '';
    let excluded = false;
    for (const segment of segments) {
      prefix = joinPath(prefix, segment);
      excluded ||= this.#isExcluded(prefix);
      if (!excluded) continue;
      if (this.#created.has(prefix)) return;
      if (!(await this.workspace.exists(prefix))) {
        this.#created.add(prefix);
        return;
      }
    }
  }

  async removeCreated(): Promise<void> {
    for (const path of this.#created) {
      if (await this.workspace.exists(path)) await this.workspace.delete(path, { recursive: true });
    }
  }
}

// ---- the host fast path --------------------------------------------------------------------------------

const DONE: Promise<void> = Promise.resolve();
const CREATE_FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0);
const NEW_FILE_MODE = 0o644;
const NEW_EXECUTABLE_MODE = 0o755;

/**
 * Hydrating a `HostWorkspace` file by file through `writeBytes` costs about fifteen thread-pool round trips
 * per file (sandbox resolution, parent checks, a temp file and a rename), ten times `cp -r`. A fresh
 * hydration only *creates* files, so this writer creates them directly under the root, synchronously, the
 * way `cp` does, and then tells the workspace what changed through its public `markChanged` (a host
 * workspace is exact about writes from outside by design: `scan` finds them, `tracked` is told).
 *
 * It never follows a link and never replaces anything: each parent directory is created or verified with
 * `lstat` to be a real directory (not a link), and files are created with `O_CREAT | O_EXCL | O_NOFOLLOW`
 * (the same guarantees as the backend's own temp-file writes). Anything else — an
 * existing file (overwrite), a link, a clash — falls back to the protocol's `writeBytes`, whose rules
 * (and errors) then apply.
 */
class DirectHostWriter {
  readonly #root: string;
  readonly #verified = new Set<NormalizedPath>(['']);
  #changed: NormalizedPath[] = [];

  private constructor(private readonly workspace: HostWorkspace) {
    this.#root = workspace.root;
  }

  static for(workspace: SnapshotableWorkspace): DirectHostWriter | undefined {
    return workspace instanceof HostWorkspace && !workspace.readOnly ? new DirectHostWriter(workspace) : undefined;
  }

  /** True when the file was created here; false to let the protocol write it. */
  tryWrite(path: NormalizedPath, bytes: Uint8Array, executable: boolean): boolean {
    if (!this.#directory(parentPath(path))) return false;
    const abs = `${this.#root}/${path}`;
    let fd: number;
    try {
      fd = openSync(abs, CREATE_FLAGS, executable ? NEW_EXECUTABLE_MODE : NEW_FILE_MODE);
    } catch {
      return false;
    }
    this.#changed.push(path);
    try {
      let offset = 0;
      while (offset < bytes.byteLength) offset += writeSync(fd, bytes, offset, bytes.byteLength - offset);
    } catch (error) {
      if (isWorkspaceError(error)) throw error;
      throw new LimitExceededError(
        `hydration stopped: cannot write ${displayPath(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        displayPath(path),
      );
    } finally {
      closeSync(fd);
    }
    if (this.#changed.length >= 1024) this.flush();
    return true;
  }

  /** Tells the workspace what was written (before a snapshot or a restore needs to know). */
  flush(): void {
    if (this.#changed.length === 0) return;
    this.workspace.markChanged(this.#changed);
    this.#changed = [];
  }

  /** Whether `path` is (now) a real directory reached through real directories only. */
  #directory(path: NormalizedPath): boolean {
    if (this.#verified.has(path)) return true;
    if (!this.#directory(parentPath(path))) return false;
    const abs = `${this.#root}/${path}`;
    try {
      mkdirSync(abs);
      this.#changed.push(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
      try {
        if (!lstatSync(abs).isDirectory()) return false;
      } catch {
        return false;
      }
    }
    this.#verified.add(path);
    return true;
  }
}

// ---- helpers --------------------------------------------------------------------------------------------

/** The base name of `hostPath` as given (`./src/` mounts at `src`); `.` and `..` take the name they stand for. */
export function defaultMountPath(hostPath: string): string {
  const name = posix.basename(hostPath.replace(/\/+$/, ''));
  if (name === '.' || name === '..') return basename(resolve(hostPath));
  return name;
}

function describeError(error: unknown): string {
  if (isWorkspaceError(error)) return error.message;
  if (error instanceof Error && error.name === 'AbortError') return 'aborted';
  return error instanceof Error ? error.name : 'unknown error';
}

function sortSkipped(skipped: SkippedPath[]): SkippedPath[] {
  return skipped.sort((a, b) => compare(a.path, b.path) || compare(a.reason, b.reason));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
