import { closeSync, constants as fsConstants, existsSync, fstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { AllowedRoots } from '../host-files/allow-list.js';
import { isExecutableMode } from '../host-files/file-mode.js';

// Hydration, step 2: reading the planned host files, so that what is read is what the walk saw.

export const UNREADABLE = 'unreadable';
export const SPECIAL = 'not a regular file or directory';

/** A source file's bytes and whether it is executable as git reads it (the owner's execute bit). */
export type ReadOutcome = { bytes: Uint8Array; executable: boolean } | { skip: string };

const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);
const PIN_DIRECTORIES = process.platform === 'linux' && existsSync('/proc/self/fd');

/**
 * Reads one host file whole. Synchronous on purpose: these are a handful of short system calls per file,
 * several times faster than thread-pool round trips; the copy loop yields to the event loop every few
 * milliseconds (see `Pacer`), so aborts and timers still run. One batch of files is held at a time, never
 * the tree.
 */
export function readSource(source: string, opener: SourceOpener, maxBytes: number): ReadOutcome {
  const opened = opener.open(source);
  if (typeof opened !== 'number') return opened;
  const fd = opened;
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { skip: SPECIAL };
    if (info.size > maxBytes) return { skip: `file over the workspace write limit of ${maxBytes} bytes` };
    // The bytes the file has as of `fstat` (what `stat` said when it was opened; a file shrinking meanwhile
    // ends early). A file reporting size 0 may still have content (procfs-like): read it to the end.
    const known = info.size > 0;
    const wanted = known ? info.size : 4096;
    let buffer = Buffer.allocUnsafeSlow(wanted); // its own memory, not a slice of the pool: the workspace may keep it
    const end = known ? info.size : Infinity;
    let length = 0;
    while (length < end) {
      if (length === buffer.length) {
        if (length > maxBytes) return { skip: `file over the workspace write limit of ${maxBytes} bytes` };
        const larger = Buffer.allocUnsafeSlow(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxBytes) return { skip: `file over the workspace write limit of ${maxBytes} bytes` };
    return { bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, length), executable: isExecutableMode(info.mode) };
  } catch {
    return { skip: UNREADABLE };
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
export class SourceOpener {
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
      return { skip: UNREADABLE };
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
export class Pacer {
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
