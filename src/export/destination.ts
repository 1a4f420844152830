import { randomBytes } from 'node:crypto';
import { TimeSlices } from '../workspace/time-slices.js';
import * as fs from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { PathEscapeError } from '../workspace/errors.js';
import { ownerGone, ownerToken } from '../backends/host/owned-temp.js';

/** An export's temp file: `.sessionfs-export-<pid>.<start>.<host>-<hex>`, beside the file it becomes. */
const EXPORT_TEMP = /^\.sessionfs-export-(\d+)\.(\d+)\.([0-9a-f]{6})-[0-9a-f]{12}$/;

/** What an export plan reads and writes: a host directory, or a workspace through the protocol. */
export interface ExportDestination {
  /** What stands at `path`, links not followed. */
  state(path: string): Promise<DestinationState>;
  /** Every non-directory below directory `path`. */
  leavesBelow(path: string): Promise<string[]>;
  makeDirectory(path: string): Promise<void>;
  put(path: string, entry: { kind: 'file'; bytes: Uint8Array; mode: number } | { kind: 'symlink'; bytes: Uint8Array }): Promise<void>;
  remove(path: string): Promise<void>;
  /** True when the directory was empty and is gone. */
  removeEmptyDirectory(path: string): Promise<boolean>;
}

/**
 * A host directory an export writes into, addressed by relative paths (`/`-separated, normalised). It
 * never follows a symlink: a link at a path is read as a link and replaced as one, and a link (or file)
 * where a directory is needed blocks the path instead of being walked through. Each file is written to a
 * temp file beside it and renamed into place, after checking that the directory it lands in is still the
 * real directory inside the destination that it was (so a directory swapped for a link meanwhile is refused).
 *
 * The system calls are synchronous, in time slices with a turn of the event loop between them (see
 * `TimeSlices`, as the host walk and hydration do): a thread-pool hop per call cost more than the calls
 * themselves, several times what `git apply` takes for the same files on a busy machine.
 */
export class Destination implements ExportDestination {
  /** The destination's real path. */
  readonly root: string;
  /** Relative paths seen to be real directories (not links), so that `state` checks each ancestor once. */
  readonly #directories = new Set<string>();
  /** Directories this export has written into, each swept once of temp files a killed export left there. */
  readonly #swept = new Set<string>();
  readonly #slices = new TimeSlices();

  constructor(root: string) {
    this.root = root;
  }

  abs(path: string): string {
    return path === '' ? this.root : join(this.root, ...path.split('/'));
  }

  /** What stands at `path`, links not followed; `blocked` names the ancestor that is not a directory. */
  async state(path: string): Promise<DestinationState> {
    await this.#turn();
    const names = path.split('/');
    for (let depth = 1; depth < names.length; depth += 1) {
      const ancestor = names.slice(0, depth).join('/');
      if (this.#directories.has(ancestor)) continue;
      const info = lstatOrUndefined(this.abs(ancestor));
      if (info === undefined) return { kind: 'missing' };
      if (!info.isDirectory()) return { kind: 'blocked', by: ancestor, link: info.isSymbolicLink() };
      this.#directories.add(ancestor);
    }
    const abs = this.abs(path);
    const info = lstatOrUndefined(abs);
    if (info === undefined) return { kind: 'missing' };
    if (info.isDirectory()) return { kind: 'directory' };
    if (info.isSymbolicLink()) return { kind: 'symlink', bytes: new Uint8Array(fs.readlinkSync(abs, { encoding: 'buffer' })) };
    if (!info.isFile()) return { kind: 'other' };
    return { kind: 'file', bytes: new Uint8Array(fs.readFileSync(abs)), executable: (info.mode & 0o100) !== 0, mode: info.mode & 0o7777 };
  }

  /** Every file, link or other non-directory below directory `path` (relative paths). */
  async leavesBelow(path: string): Promise<string[]> {
    await this.#turn();
    const out: string[] = [];
    for (const entry of fs.readdirSync(this.abs(path), { withFileTypes: true })) {
      const child = path === '' ? entry.name : `${path}/${entry.name}`;
      if (entry.isDirectory()) out.push(...(await this.leavesBelow(child)));
      else out.push(child);
    }
    return out;
  }

  /** Creates the directory `path` and its missing parents, refusing anything but a directory on the way. */
  async makeDirectory(path: string): Promise<void> {
    await this.#turn();
    this.#makeDirectory(path);
  }

  #makeDirectory(path: string): void {
    if (path === '') return;
    const names = path.split('/');
    for (let depth = 1; depth <= names.length; depth += 1) {
      const partial = names.slice(0, depth).join('/');
      const abs = this.abs(partial);
      try {
        fs.mkdirSync(abs);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (!fs.lstatSync(abs).isDirectory()) throw new PathEscapeError(partial, `not a directory at the destination: ${partial}`);
      }
    }
  }

  /** Writes a file (`mode` its permission bits) or a symlink at `path` atomically; parents are created. */
  async put(
    path: string,
    entry: { kind: 'file'; bytes: Uint8Array; mode: number } | { kind: 'symlink'; bytes: Uint8Array },
  ): Promise<void> {
    await this.#turn();
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    // The parent usually exists and is checked in one call; a missing one is made, refusing links on the way.
    try {
      this.#checkDirectory(parent);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      this.#makeDirectory(parent);
    }
    const target = this.abs(path);
    this.#sweep(parent);
    const temp = join(dirname(target), `.sessionfs-export-${ownerToken()}-${randomBytes(6).toString('hex')}`);
    if (entry.kind === 'symlink') fs.symlinkSync(Buffer.from(entry.bytes), temp);
    else {
      const fd = fs.openSync(temp, 'wx', entry.mode);
      try {
        fs.writeFileSync(fd, entry.bytes);
        fs.fchmodSync(fd, entry.mode); // the umask must not decide the bits
      } catch (error) {
        fs.closeSync(fd);
        fs.rmSync(temp, { force: true });
        throw error;
      }
      fs.closeSync(fd);
    }
    try {
      this.#checkDirectory(parent);
      fs.renameSync(temp, target);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
  }

  /**
   * Removes from directory `path` (once per export) the temp files of exports whose process is gone (a
   * `kill -9` between a temp file's write and its rename), never a live export's, and only files or links
   * themselves (unlink never follows a link).
   */
  #sweep(path: string): void {
    if (this.#swept.has(path)) return;
    this.#swept.add(path);
    const abs = this.abs(path);
    for (const name of fs.readdirSync(abs)) {
      const owner = EXPORT_TEMP.exec(name);
      if (owner === null || !ownerGone(owner[1] as string, owner[2] as string, owner[3] as string)) continue;
      try {
        if (!fs.lstatSync(join(abs, name)).isDirectory()) fs.unlinkSync(join(abs, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // another sweeper was first
      }
    }
  }

  /** Removes the file or link at `path` (never what a link points to). */
  async remove(path: string): Promise<void> {
    await this.#turn();
    this.#checkDirectory(path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
    fs.unlinkSync(this.abs(path));
  }

  /** Removes directory `path` when it is empty; true when it is gone. */
  async removeEmptyDirectory(path: string): Promise<boolean> {
    await this.#turn();
    try {
      this.#checkDirectory(path);
      fs.rmdirSync(this.abs(path));
      this.#directories.clear();
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') return false;
      throw error;
    }
  }

  /** The directory at `path` is, in reality, that path inside the destination (no link on the way). */
  #checkDirectory(path: string): void {
    const expected = this.abs(path);
    const real = fs.realpathSync.native(expected);
    if (real !== expected || !(real === this.root || real.startsWith(this.root.endsWith(sep) ? this.root : `${this.root}${sep}`))) {
      throw new PathEscapeError(
        path === '' ? '/' : path,
        `the destination changed under the export: ${path === '' ? '/' : path} is no longer a directory inside it`,
      );
    }
  }

  /** Gives the event loop a turn when the current slice of system calls is over. */
  #turn(): Promise<void> {
    return this.#slices.turn();
  }
}

export type DestinationState =
  | { kind: 'missing' }
  | { kind: 'blocked'; by: string; link: boolean }
  | { kind: 'directory' }
  | { kind: 'other' }
  | { kind: 'symlink'; bytes: Uint8Array }
  | { kind: 'file'; bytes: Uint8Array; executable: boolean; mode: number };

function lstatOrUndefined(abs: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}
