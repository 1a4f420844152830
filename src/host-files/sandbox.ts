import * as fs from 'node:fs';
import { fromDriverError } from '../workspace/driver-errors.js';
import { isAbsolute } from 'node:path';
import { promisify } from 'node:util';
import { linkLoopError, NotADirectoryError, PathEscapeError, WorkspaceError } from '../workspace/errors.js';
import { displayPath, type NormalizedPath } from '../workspace/paths.js';

/**
 * The host sandbox: every workspace path is resolved component by component against the real root, with
 * `lstat` on each one. A symlink met on the way (or at the end, when asked to follow) has its target read
 * and resolved the same way; a target that leaves the root — absolute or relative, existing or dangling —
 * is a `PathEscapeError`. The result is the entry's real path inside the root, so every operation acts on
 * a path made only of real directories.
 *
 * Reads additionally verify the opened descriptor (see `verifyDescriptor`), and mutations and directory
 * reads go through a pinned directory (see `PinnedDir`), closing the window in which a component could be
 * swapped for a link between this check and the use.
 */

/** Most links followed while resolving one path (Linux's own limit). */
const MAX_LINK_HOPS = 40;

export interface Resolved<S = fs.Stats> {
  /** Real path relative to the root ('' for the root). */
  rel: NormalizedPath;
  abs: string;
  /** lstat of the final entry; undefined when it does not exist. */
  stat: S | undefined;
}

/** What resolution needs to know of an entry, from the disk or from a layered view of it (the overlay). */
export interface LinkStat {
  isSymbolicLink(): boolean;
  isDirectory(): boolean;
}

/**
 * How resolution looks at entries, by absolute path under the root: `lstat` without following, `readlink`.
 * Failures carry a Node-style `code` (`ENOENT` for an absent entry).
 */
export interface ResolveIo<S extends LinkStat> {
  lstat(abs: string): S;
  readlink(abs: string): string;
}

export class Sandbox {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  abs(rel: NormalizedPath): string {
    return rel === '' ? this.root : `${this.root}/${rel}`;
  }

  /** Workspace-relative form of an absolute host path inside the root; undefined when outside. */
  relativeOf(absolute: string): NormalizedPath | undefined {
    if (absolute === this.root) return '';
    if (absolute.startsWith(`${this.root}/`)) return absolute.slice(this.root.length + 1);
    return undefined;
  }

  /**
   * Resolves `path` to its real location. Intermediate links are always followed (inside the root only);
   * the final component is followed when `followFinal`. Missing components end the resolution: the rest
   * of the path is appended lexically (a `..` climbing out of the root from a link target is an escape).
   */
  async resolve(path: NormalizedPath, followFinal: boolean): Promise<Resolved> {
    return this.#resolve(
      path,
      followFinal,
      (p) => fs.promises.lstat(p),
      (p) => fs.promises.readlink(p),
    );
  }

  resolveSync(path: NormalizedPath, followFinal: boolean): Resolved {
    return this.resolveWith(path, followFinal, { lstat: (p) => fs.lstatSync(p), readlink: (p) => fs.readlinkSync(p) });
  }

  /**
   * The same resolution over any synchronous view of the tree under the root: the overlay resolves through
   * its merged layers with exactly the rules the host applies to the disk.
   */
  resolveWith<S extends LinkStat>(path: NormalizedPath, followFinal: boolean, io: ResolveIo<S>): Resolved<S> {
    // The resolver is written once, as a generator; run it with synchronous primitives.
    const run = this.#resolveGen<S>(path, followFinal);
    let step = run.next();
    while (!step.done) {
      const request = step.value;
      let reply: { stat?: S; link?: string; error?: unknown };
      try {
        reply = request.op === 'lstat' ? { stat: io.lstat(request.path) } : { link: io.readlink(request.path) };
      } catch (error) {
        reply = { error };
      }
      step = run.next(reply);
    }
    return step.value;
  }

  async #resolve(
    path: NormalizedPath,
    followFinal: boolean,
    lstat: (p: string) => Promise<fs.Stats>,
    readlink: (p: string) => Promise<string>,
  ): Promise<Resolved> {
    const run = this.#resolveGen<fs.Stats>(path, followFinal);
    let step = run.next();
    while (!step.done) {
      const request = step.value;
      let reply: { stat?: fs.Stats; link?: string; error?: unknown };
      try {
        reply = request.op === 'lstat' ? { stat: await lstat(request.path) } : { link: await readlink(request.path) };
      } catch (error) {
        reply = { error };
      }
      step = run.next(reply);
    }
    return step.value;
  }

  *#resolveGen<S extends LinkStat>(
    path: NormalizedPath,
    followFinal: boolean,
  ): Generator<{ op: 'lstat' | 'readlink'; path: string }, Resolved<S>, { stat?: S; link?: string; error?: unknown }> {
    const shown = displayPath(path);
    const real: string[] = [];
    const queue = path === '' ? [] : path.split('/');
    let hops = 0;
    let lastStat: S | undefined = undefined;
    if (queue.length === 0) {
      const reply = yield { op: 'lstat', path: this.root };
      if (reply.error !== undefined) throw hostError(reply.error, '');
      return { rel: '', abs: this.root, stat: reply.stat };
    }
    while (queue.length > 0) {
      const segment = queue.shift() as string;
      if (segment === '' || segment === '.') continue;
      if (segment === '..') {
        if (real.length === 0) throw new PathEscapeError(shown, `a symlink leaves the workspace: ${shown}`);
        real.pop();
        continue;
      }
      const candidate = [...real, segment];
      const candidateAbs = `${this.root}/${candidate.join('/')}`;
      const isLast = queue.every((s) => s === '' || s === '.');
      const reply = yield { op: 'lstat', path: candidateAbs };
      if (reply.error !== undefined) {
        const code = (reply.error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          // Missing: the rest is appended lexically.
          const rest = [...candidate];
          for (const s of queue) {
            if (s === '' || s === '.') continue;
            if (s === '..') {
              if (rest.length === 0) throw new PathEscapeError(shown, `a symlink leaves the workspace: ${shown}`);
              rest.pop();
            } else rest.push(s);
          }
          const rel = rest.join('/');
          return { rel, abs: rel === '' ? this.root : `${this.root}/${rel}`, stat: undefined };
        }
        if (code === 'ENOTDIR') throw new NotADirectoryError(shown);
        throw hostError(reply.error, path);
      }
      const stat = reply.stat as S;
      if (stat.isSymbolicLink() && (!isLast || followFinal)) {
        hops += 1;
        if (hops > MAX_LINK_HOPS) throw linkLoopError(shown);
        const linkReply = yield { op: 'readlink', path: candidateAbs };
        if (linkReply.error !== undefined) {
          // Replaced by something else since the lstat: look at the component again.
          if (
            (linkReply.error as NodeJS.ErrnoException).code === 'EINVAL' ||
            (linkReply.error as NodeJS.ErrnoException).code === 'ENOENT'
          ) {
            queue.unshift(segment);
            continue;
          }
          throw hostError(linkReply.error, path);
        }
        const target = linkReply.link as string;
        if (isAbsolute(target)) {
          const inside = this.relativeOf(target.replace(/\/+$/, '') || '/');
          if (inside === undefined) throw new PathEscapeError(shown, `a symlink leaves the workspace: ${shown}`);
          real.length = 0;
          queue.unshift(...inside.split('/'));
        } else {
          queue.unshift(...target.split('/'));
        }
        continue;
      }
      if (!isLast && !stat.isDirectory()) throw new NotADirectoryError(shown);
      real.push(segment);
      lastStat = stat;
    }
    const rel = real.join('/');
    if (rel === '') {
      const reply = yield { op: 'lstat', path: this.root };
      lastStat = reply.stat;
    }
    return { rel, abs: rel === '' ? this.root : `${this.root}/${rel}`, stat: lastStat };
  }

  /**
   * Confirms an open descriptor is the expected entry inside the root. On Linux the kernel's view of the
   * descriptor (`/proc/<pid>/fd`) is compared with the expected path, which defeats a component swapped
   * for an escaping link after resolution; elsewhere the check is skipped (documented limitation).
   */
  async verifyDescriptor(fd: number, expectedAbs: string, shown: string): Promise<void> {
    if (process.platform !== 'linux') return;
    let actual: string;
    try {
      actual = await fs.promises.readlink(`${DESCRIPTORS}/${fd}`);
    } catch {
      return;
    }
    assertOpenedAt(actual, expectedAbs, shown);
  }

  /** {@link verifyDescriptor} on the main thread (a small read's whole open-verify-read runs synchronously). */
  verifyDescriptorSync(fd: number, expectedAbs: string, shown: string): void {
    if (process.platform !== 'linux') return;
    let actual: string;
    try {
      actual = fs.readlinkSync(`${DESCRIPTORS}/${fd}`);
    } catch {
      return;
    }
    assertOpenedAt(actual, expectedAbs, shown);
  }
}

/**
 * The kernel's path of an opened descriptor must be the one resolved. A file replaced (renamed over or
 * deleted) between the open and this check shows as `<path> (deleted)`: it was at that very path inside
 * the root when it went, so the descriptor holds that file's last contents (a read racing a replace gets
 * the old version, as from a descriptor opened a moment earlier), not an escape.
 */
function assertOpenedAt(actual: string, expectedAbs: string, shown: string): void {
  if (actual === expectedAbs || actual === `${expectedAbs} (deleted)`) return;
  throw new PathEscapeError(shown, `the path changed while it was being opened: ${shown}`);
}

/** Whether directories are pinned by descriptor (Linux with /proc); elsewhere a pin is only a checked path. */
export const PIN_DIRECTORIES = process.platform === 'linux' && fs.existsSync('/proc/self/fd');

/**
 * Where the kernel shows this process's descriptors: `/proc/<pid>/fd` when /proc is mounted for this
 * process's pid namespace (`/proc/self` names our pid), else `/proc/self/fd`. The first spares the kernel
 * one link per lookup (`self`), and every file grep reads in a pinned directory is opened through it.
 */
export const DESCRIPTORS = PIN_DIRECTORIES ? descriptorDirectory() : '/proc/self/fd';

function descriptorDirectory(): string {
  try {
    if (fs.readlinkSync('/proc/self') === String(process.pid)) return `/proc/${process.pid}/fd`;
  } catch {
    // no /proc/self link to compare with: keep the portable name
  }
  return '/proc/self/fd';
}
const DIRECTORY_FLAGS = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;

/**
 * A directory pinned by an open descriptor. On Linux, `path` is `/proc/<pid>/fd/<fd>`, and `at(name)` names
 * an entry of that very directory however its ancestors are renamed or swapped for links afterwards: every
 * mutation goes through a pin, so the check done when pinning (the directory really lies inside the root)
 * still holds when the write, rename or unlink happens. Elsewhere `path` is the directory's own path and
 * the protection is only the check at resolution time (documented limitation).
 */
export class PinnedDir {
  readonly path: string;
  readonly #fd: number | undefined;
  #released = false;

  constructor(path: string, fd: number | undefined) {
    this.path = path;
    this.#fd = fd;
  }

  at(name: string): string;
  at(name: string | Buffer): string | Buffer;
  at(name: string | Buffer): string | Buffer {
    return typeof name === 'string' ? `${this.path}/${name}` : Buffer.concat([Buffer.from(`${this.path}/`), name]);
  }

  /** Closes the descriptor, once: a second call does nothing (the number may belong to another file by then). */
  release(): void {
    if (this.#fd === undefined || this.#released) return;
    this.#released = true;
    try {
      fs.closeSync(this.#fd);
    } catch {
      // already closed
    }
  }
}

/** Pins the real directory `rel` (resolved by the caller), checking that it still is that directory. */
export function pinDirectory(sandbox: Sandbox, rel: NormalizedPath, shown: NormalizedPath): PinnedDir {
  const abs = sandbox.abs(rel);
  if (!PIN_DIRECTORIES) return new PinnedDir(abs, undefined);
  let fd: number;
  try {
    fd = fs.openSync(abs, DIRECTORY_FLAGS);
  } catch (error) {
    throw hostError(error, shown);
  }
  let actual: string | undefined;
  try {
    actual = fs.readlinkSync(`${DESCRIPTORS}/${fd}`);
  } catch {
    actual = undefined;
  }
  return verifiedPin(abs, fd, actual, shown);
}

/**
 * {@link pinDirectory} with its system calls off the event loop (the temp-file sweep at opening). The
 * search walk pins synchronously, in time slices, which costs less CPU than a thread-pool hop per directory.
 */
export async function pinDirectoryAsync(sandbox: Sandbox, rel: NormalizedPath, shown: NormalizedPath): Promise<PinnedDir> {
  const abs = sandbox.abs(rel);
  if (!PIN_DIRECTORIES) return new PinnedDir(abs, undefined);
  let fd: number;
  try {
    fd = await openAsync(abs, DIRECTORY_FLAGS);
  } catch (error) {
    throw hostError(error, shown);
  }
  const actual = await fs.promises.readlink(`${DESCRIPTORS}/${fd}`).catch(() => undefined);
  return verifiedPin(abs, fd, actual, shown);
}

const openAsync = promisify(fs.open) as (path: string, flags: number) => Promise<number>;

/** The pin of descriptor `fd`, when the kernel says it is the directory `abs` (no link on the way); else closed and refused. */
function verifiedPin(abs: string, fd: number, actual: string | undefined, shown: NormalizedPath): PinnedDir {
  if (actual !== abs) {
    fs.closeSync(fd);
    throw new PathEscapeError(displayPath(shown), `the path changed while it was being used: ${displayPath(shown)}`);
  }
  return new PinnedDir(`${DESCRIPTORS}/${fd}`, fd);
}

/** Pins the child directory `name` of a pinned directory; a link standing there is refused (ELOOP). */
export function pinChild(parent: PinnedDir, name: string | Buffer, shown: NormalizedPath): PinnedDir {
  const path = parent.at(name);
  if (!PIN_DIRECTORIES) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(path);
    } catch (error) {
      throw hostError(error, shown);
    }
    if (st.isSymbolicLink())
      throw new PathEscapeError(displayPath(shown), `the path changed while it was being used: ${displayPath(shown)}`);
    if (!st.isDirectory()) throw new NotADirectoryError(displayPath(shown));
    return new PinnedDir(typeof path === 'string' ? path : path.toString(), undefined);
  }
  let fd: number;
  try {
    fd = fs.openSync(path, DIRECTORY_FLAGS);
  } catch (error) {
    throw hostError(error, shown);
  }
  return new PinnedDir(`${DESCRIPTORS}/${fd}`, fd);
}

/** {@link pinChild} off the event loop: one `open` through the parent's descriptor, no `readlink` needed. */
export async function pinChildAsync(parent: PinnedDir, name: string, shown: NormalizedPath): Promise<PinnedDir> {
  if (!PIN_DIRECTORIES) return pinChild(parent, name, shown);
  let fd: number;
  try {
    fd = await openAsync(parent.at(name), DIRECTORY_FLAGS);
  } catch (error) {
    throw hostError(error, shown);
  }
  return new PinnedDir(`${DESCRIPTORS}/${fd}`, fd);
}

/**
 * Maps a Node fs error to the protocol's error for a workspace path: the shared layer's one mapping (see
 * `fromDriverError`). The original error is never chained: its message and `path` hold host absolute paths.
 */
export function hostError(error: unknown, path: NormalizedPath): WorkspaceError {
  return fromDriverError(error, path);
}
