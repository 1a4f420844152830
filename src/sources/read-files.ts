// Hydration, step 2: reading the planned host files, so that what is read is what the walk saw. The
// reading function is self-contained: it runs on the main thread for a small hydration and inside the
// reader worker (`read-pool.ts`) for a large one, from its own source text.

/** A source file's bytes and whether it is executable as git reads it (the owner's execute bit). */
export type ReadOutcome = { bytes: Uint8Array; executable: boolean } | { skip: string };

/** One run of planned files to read, in order. */
export interface ReadJob {
  /** Real host paths (as the walk planned them). */
  paths: string[];
  /** The allow-list's real roots: a directory whose descriptor lies elsewhere is not read from. */
  roots: string[];
  /** A file over this many bytes is skipped (the workspace's write limit). */
  maxFileBytes: number;
  /** Stop after the file that brings the bytes read to this many: `outcomes` may then be shorter than `paths`. */
  maxJobBytes: number;
  /** Open through pinned directory descriptors (`/proc/self/fd/<dir>/<name>`: Linux). */
  pinDirectories: boolean;
  /** The reasons a file is skipped for, as the plan words them. */
  reasons: { unreadable: string; special: string };
}

/**
 * Reads the files of `job` whole, in order, one descriptor at a time. Every file is opened with
 * `O_NOFOLLOW | O_NONBLOCK` (a file swapped for a link is refused; a FIFO swapped in cannot block). With
 * `pinDirectories`, each directory is opened once, the real path of that descriptor is checked against the
 * allow-list, and its files are opened through it: a parent swapped for a link after the walk cannot
 * redirect the reads. Elsewhere files are opened by path (the walk's checks only).
 *
 * A file is read up to the size `fstat` gives when it is open (a file growing meanwhile is cut there; one
 * shrinking ends early); a file reporting size 0 may still have content (procfs-like) and is read to its
 * end. Each file's bytes get their own memory of their exact length: whoever receives them keeps them.
 * Every descriptor is closed before it returns, whatever happens.
 *
 * Self-contained (its source runs in a worker): it uses only `fs` and its own arguments.
 */
export function readHostFiles(fs: typeof import('node:fs'), job: ReadJob): ReadOutcome[] {
  const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  const DIRECTORY_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | (fs.constants.O_NOFOLLOW ?? 0);
  const { maxFileBytes, reasons } = job;
  const overLimit = { skip: `file over the workspace write limit of ${maxFileBytes} bytes` };
  const directories = new Map<string, number | undefined>();
  const closeQuietly = (descriptor: number): void => {
    try {
      fs.closeSync(descriptor);
    } catch {
      // already closed
    }
  };
  const allowed = (real: string): boolean =>
    job.roots.some((root) => real === root || real.startsWith(root.endsWith('/') ? root : `${root}/`));
  /** A verified descriptor of a real directory inside the allowed roots, or undefined. */
  const directoryOf = (directory: string): number | undefined => {
    if (directories.has(directory)) return directories.get(directory);
    let descriptor: number | undefined;
    try {
      descriptor = fs.openSync(directory, DIRECTORY_FLAGS);
      if (!allowed(fs.readlinkSync(`/proc/self/fd/${descriptor}`))) {
        closeQuietly(descriptor);
        descriptor = undefined;
      }
    } catch {
      if (descriptor !== undefined) closeQuietly(descriptor);
      descriptor = undefined;
    }
    // Files come sorted, so a directory's files are (nearly always) together: a few descriptors suffice.
    if (directories.size >= 16) {
      const [oldest, old] = directories.entries().next().value as [string, number | undefined];
      if (old !== undefined) closeQuietly(old);
      directories.delete(oldest);
    }
    directories.set(directory, descriptor);
    return descriptor;
  };
  const open = (source: string): number | { skip: string } => {
    let path = source;
    if (job.pinDirectories) {
      const slash = source.lastIndexOf('/');
      const descriptor = directoryOf(slash <= 0 ? '/' : source.slice(0, slash));
      if (descriptor === undefined) return { skip: 'moved outside the allowed roots during hydration' };
      path = `/proc/self/fd/${descriptor}/${source.slice(slash + 1)}`;
    }
    try {
      return fs.openSync(path, OPEN_FLAGS);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ENOENT') return { skip: 'vanished during hydration' };
      if (code === 'ELOOP') return { skip: 'became a symlink during hydration' };
      return { skip: reasons.unreadable };
    }
  };
  const readOpen = (descriptor: number): ReadOutcome => {
    const info = fs.fstatSync(descriptor);
    if (!info.isFile()) return { skip: reasons.special };
    if (info.size > maxFileBytes) return overLimit;
    const executable = (info.mode & 0o100) !== 0;
    const known = info.size > 0;
    const end = known ? info.size : Infinity;
    // Its own memory, not a slice of Node's pool: the workspace keeps it.
    let buffer = Buffer.allocUnsafeSlow(known ? info.size : 4096);
    let length = 0;
    while (length < end) {
      if (length === buffer.length) {
        if (length > maxFileBytes) return overLimit;
        const larger = Buffer.allocUnsafeSlow(Math.min(buffer.length * 2, maxFileBytes + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const read = fs.readSync(descriptor, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxFileBytes) return overLimit;
    if (length === buffer.length) return { bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, length), executable };
    // Shorter than its memory (it shrank, or its size was unknown): kept at its exact length.
    const exact = new Uint8Array(length);
    exact.set(buffer.subarray(0, length));
    return { bytes: exact, executable };
  };

  const outcomes: ReadOutcome[] = [];
  let bytes = 0;
  try {
    for (const source of job.paths) {
      const opened = open(source);
      if (typeof opened !== 'number') {
        outcomes.push(opened);
        continue;
      }
      let outcome: ReadOutcome;
      try {
        outcome = readOpen(opened);
      } catch {
        outcome = { skip: reasons.unreadable };
      } finally {
        closeQuietly(opened);
      }
      outcomes.push(outcome);
      if ('bytes' in outcome) bytes += outcome.bytes.byteLength;
      if (bytes >= job.maxJobBytes) break;
    }
  } finally {
    for (const descriptor of directories.values()) if (descriptor !== undefined) closeQuietly(descriptor);
  }
  return outcomes;
}
