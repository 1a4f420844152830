import { constants as fsConstants, type Dirent } from 'node:fs';
import { lstat, open, readdir, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
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
import { assertCreatable, displayPath, fitsLimits, joinPath, normalizePath, parentPath, splitPath, type NormalizedPath } from '../workspace/paths.js';
import type { SnapshotableWorkspace, SkippedPath } from '../workspace/types.js';
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
 * file is opened with `O_NOFOLLOW`, and on Linux the opened descriptor's real path is checked against the
 * allow-list again, so a file swapped for a link (or a parent swapped for one) after the walk is not read.
 * No error or skipped entry names a host path: mounts are identified by index and workspace path.
 */
export async function hydrate(workspace: SnapshotableWorkspace, mounts: readonly HostMount[], options: HydrateOptions): Promise<HydrateResult> {
  if (workspace.readOnly) throw new ReadOnlyError(undefined, 'the workspace is read-only: cannot hydrate it');
  const parsed = HostMountSchema.array().safeParse(mounts);
  if (!parsed.success) {
    throw new InvalidArgumentError(`invalid mounts: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'mounts'}: ${issue.message}`).join('; ')}`);
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
  try {
    for (const directory of leafDirectories) {
      signal?.throwIfAborted();
      await workspace.mkdir(directory, { parents: true, existOk: true });
    }
    const reader = new Prefetcher(files, allowed, workspace.limits.maxWriteBytes);
    const mountBytes = new Map<number, number>();
    for (let index = 0; index < files.length; index += 1) {
      const [path, file] = files[index] as [NormalizedPath, PlannedFile];
      const outcome = await reader.take(index);
      signal?.throwIfAborted();
      if ('skip' in outcome) {
        skipped.push({ path: displayPath(path), reason: outcome.skip });
        continue;
      }
      const total = (mountBytes.get(file.mount) ?? 0) + outcome.bytes.byteLength;
      mountBytes.set(file.mount, total);
      const budget = plan.budgets[file.mount];
      if (budget !== undefined && total > budget) {
        throw new LimitExceededError(`hydration refused: ${plan.describe(file.mount)} grew past its maxBytes of ${budget} bytes while it was being copied; nothing was written`);
      }
      await workspace.writeBytes(path, outcome.bytes, { mode: 'overwrite', createParents: true });
      written += 1;
      bytes += outcome.bytes.byteLength;
      options.onProgress?.({ files: written, bytes, path: displayPath(path) });
    }
  } catch (error) {
    try {
      await workspace.restore(before);
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
  invalidName: 'name cannot be a workspace path (control character or backslash)',
  limits: 'path over the workspace limits (depth or segment length)',
  special: 'not a regular file or directory',
  unreadable: 'unreadable',
} as const;

// eslint-disable-next-line no-control-regex
const INVALID_NAME = /[\u0000-\u001f\u007f-\u009f\\]/;
/** How many directory entries are examined at once while walking. */
const STAT_CONCURRENCY = 32;

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
      link = (await lstat(mount.hostPath)).isSymbolicLink();
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
      real = await realpath(mount.hostPath);
    } catch {
      throw new FileNotFoundError(displayPath(mountPath), `${label}: the host path ${link ? 'is a broken symlink' : 'cannot be resolved'}`);
    }
    if (!this.allowed.contains(real)) {
      throw new PathEscapeError(displayPath(mountPath), `${label}: the host path lies outside the allowed host roots`);
    }
    const info = await stat(real).catch(() => undefined);
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
    await this.#walk(context, real, '', new Set([real]));
  }

  /** Walks one real directory; `relative` is its path relative to the mount source. */
  async #walk(context: MountContext, realDirectory: string, relative: string, ancestors: Set<string>): Promise<void> {
    this.signal?.throwIfAborted();
    const workspaceDirectory = relative === '' ? context.mountPath : joinPath(context.mountPath, relative);
    let children: Dirent[];
    try {
      children = await readdir(realDirectory, { withFileTypes: true });
    } catch {
      this.skipped.push({ path: displayPath(workspaceDirectory), reason: `${SKIP.unreadable} directory` });
      return;
    }
    children.sort((a, b) => compare(a.name, b.name));

    // Classify every child first (stat calls run a few at a time), then apply them in name order.
    const classified = await mapLimit(children, STAT_CONCURRENCY, (child) => this.#classify(context, realDirectory, relative, child, ancestors));
    for (const item of classified) {
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
      await this.#walk(context, item.source, item.relative, nested);
    }
  }

  async #classify(
    context: MountContext,
    realDirectory: string,
    relative: string,
    child: Dirent,
    ancestors: Set<string>,
  ): Promise<
    | undefined
    | { kind: 'skip'; path: string; reason: string }
    | { kind: 'file'; relative: string; source: string; size: number }
    | { kind: 'directory'; relative: string; source: string }
  > {
    const name = child.name;
    const workspaceDirectory = relative === '' ? context.mountPath : joinPath(context.mountPath, relative);
    if (INVALID_NAME.test(name)) return { kind: 'skip', path: joinPath(workspaceDirectory, printable(name)), reason: SKIP.invalidName };
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
        source = await realpath(hostPath);
      } catch {
        return { kind: 'skip', path: workspacePath, reason: SKIP.brokenSymlink };
      }
      if (!this.allowed.contains(source)) return { kind: 'skip', path: workspacePath, reason: SKIP.outside };
      const target = await stat(source).catch(() => undefined);
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
        size = (await lstat(hostPath)).size;
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
    const segments = splitPath(path);
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

type ReadOutcome = { bytes: Uint8Array } | { skip: string };

/** How many files are read ahead of the (sequential) writes. Bounded so a large tree never sits in memory. */
const READ_AHEAD = 8;
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);
const CHECK_DESCRIPTOR = process.platform === 'linux';

class Prefetcher {
  readonly #pending = new Map<number, Promise<ReadOutcome>>();
  #next = 0;

  constructor(
    private readonly files: readonly (readonly [NormalizedPath, PlannedFile])[],
    private readonly allowed: AllowedRoots,
    private readonly maxBytes: number,
  ) {}

  async take(index: number): Promise<ReadOutcome> {
    while (this.#next < this.files.length && this.#next < index + READ_AHEAD) {
      const file = this.files[this.#next] as readonly [NormalizedPath, PlannedFile];
      this.#pending.set(this.#next, this.#read(file[1].source));
      this.#next += 1;
    }
    const outcome = this.#pending.get(index) as Promise<ReadOutcome>;
    this.#pending.delete(index);
    return outcome;
  }

  async #read(source: string): Promise<ReadOutcome> {
    let handle: FileHandle;
    try {
      handle = await open(source, OPEN_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { skip: 'vanished during hydration' };
      if (code === 'ELOOP') return { skip: 'became a symlink during hydration' };
      return { skip: SKIP.unreadable };
    }
    try {
      if (CHECK_DESCRIPTOR) {
        // The descriptor's real path: catches a parent directory swapped for a link since the walk.
        const actual = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
        if (actual !== undefined && !this.allowed.contains(actual)) return { skip: 'moved outside the allowed roots during hydration' };
      }
      const info = await handle.stat();
      if (!info.isFile()) return { skip: SKIP.special };
      if (info.size > this.maxBytes) return { skip: `file over the workspace write limit of ${this.maxBytes} bytes` };
      const bytes = await handle.readFile();
      if (bytes.byteLength > this.maxBytes) return { skip: `file over the workspace write limit of ${this.maxBytes} bytes` };
      return { bytes };
    } catch {
      return { skip: SKIP.unreadable };
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}

// ---- helpers --------------------------------------------------------------------------------------------

/** The base name of `hostPath` as given (`./src/` mounts at `src`); `.` and `..` take the name they stand for. */
export function defaultMountPath(hostPath: string): string {
  const name = posix.basename(hostPath.replace(/\/+$/, ''));
  if (name === '.' || name === '..') return basename(resolve(hostPath));
  return name;
}

function printable(name: string): string {
  return JSON.stringify(name).slice(1, -1).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
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

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await fn(items[index] as T);
    }
  });
  await Promise.all(workers);
  return results;
}
