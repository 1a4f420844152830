// Hydration, step 2: reading the planned host files, so that what is read is what the walk saw. The
// reading function is self-contained: it runs on the main thread for a small hydration and inside the
// reader worker (`read-pool.ts`) for a large one, from its own source text.

/** A source file's bytes and whether it is executable as git reads it (the owner's execute bit). */
export type ReadOutcome = { bytes: Uint8Array; executable: boolean } | { skip: string };

/**
 * What one job read, compactly (a few objects whatever the number of files: the reader thread transfers
 * `buffers` and `table.buffer`, and the receiving thread makes a file's outcome only when it is taken, see
 * {@link outcomeOf}). Nobody else holds any of it.
 */
export interface ReadBatch {
  /** The memory the files' bytes lie in: slabs shared by several small files, and large files' own. */
  buffers: ArrayBuffer[];
  /** `FIELDS` numbers per file answered, in order: see {@link outcomeOf}. */
  table: Float64Array;
  /** Files answered: fewer than the job's paths when it stopped for its bytes. */
  count: number;
  /** The reasons files were skipped for. */
  skips: string[];
}

/**
 * Numbers per file in a batch's table: where its bytes are (a buffer's index, or `SKIPPED` / `EMPTY`), their
 * offset and length, and 1 when it is executable. A skipped file's offset is its reason's index in `skips`,
 * its length 0. (`readHostFiles` writes the same layout with its own constants: its source stands alone.)
 */
const FIELDS = 4;
const SKIPPED = -1;
const EMPTY = -2;

/** The `index`th file's outcome in `batch`: its bytes a view of the memory they were read into. */
export function outcomeOf(batch: ReadBatch, index: number): ReadOutcome {
  const at = index * FIELDS;
  const { table } = batch;
  const where = table[at] as number;
  if (where === SKIPPED) return { skip: batch.skips[table[at + 1] as number] as string };
  const executable = table[at + 3] === 1;
  if (where === EMPTY) return { bytes: new Uint8Array(0), executable };
  return { bytes: new Uint8Array(batch.buffers[where] as ArrayBuffer, table[at + 1], table[at + 2]), executable };
}

/** The bytes `batch` holds. */
export function batchBytes(batch: ReadBatch): number {
  let bytes = 0;
  for (let at = 2; at < batch.count * FIELDS; at += FIELDS) bytes += batch.table[at] as number;
  return bytes;
}

/** One run of planned files to read, in order. */
export interface ReadJob {
  /** Real host paths (as the walk planned them). */
  paths: string[];
  /** The allow-list's real roots: a directory whose descriptor lies elsewhere is not read from. */
  roots: string[];
  /** A file over this many bytes is skipped (the workspace's write limit). */
  maxFileBytes: number;
  /** Stop after the file that brings the bytes read to this many: the batch may then answer fewer files than `paths`. */
  maxJobBytes: number;
  /** Open through pinned directory descriptors (`/proc/<pid>/fd/<dir>/<name>`: Linux). */
  pinDirectories: boolean;
  /** The reasons a file is skipped for, as the plan words them. */
  reasons: { unreadable: string; special: string };
}

/**
 * Reads the files of `job` whole, in order. Every file is opened with `O_NOFOLLOW | O_NONBLOCK` (a file
 * swapped for a link is refused; a FIFO swapped in cannot block). With `pinDirectories`, each directory is
 * opened once, the real path of that descriptor is checked against the allow-list, and its files are opened
 * through it: a parent swapped for a link after the walk cannot redirect the reads. Elsewhere files are
 * opened by path (the walk's checks only).
 *
 * A file is read up to the size `fstat` gives when it is open (a file growing meanwhile is cut there; one
 * shrinking ends early); a file reporting size 0 may still have content (procfs-like) and is read to its
 * end. Where the bytes go is what keeps allocation cheap: an ArrayBuffer costs the collector far more than a
 * view of one, so small files (under `OWN_FROM` bytes) are opened a group at a time (at most `GROUP_FILES`
 * descriptors, at most `SLAB_BYTES` of them) and read into one slab of exactly their sizes; a larger file,
 * or one whose size is unknown, gets memory of its exact length. A slab lives as long as any file in it:
 * at most `SLAB_BYTES` stay held for a file still kept when the others of its slab are gone, and right
 * after the read nothing is held beyond the files' bytes (but for files that shrank while read).
 *
 * Every descriptor is closed before it returns, whatever happens. Self-contained (its source runs in a
 * worker): it uses only `fs`, `process.pid` and its own arguments.
 */
export function readHostFiles(fs: typeof import('node:fs'), job: ReadJob): ReadBatch {
  const FIELDS = 4;
  const SKIPPED = -1;
  const EMPTY = -2;
  const OWN_FROM = 128 * 1024;
  const SLAB_BYTES = 1024 * 1024;
  const GROUP_FILES = 64;
  const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  const DIRECTORY_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | (fs.constants.O_NOFOLLOW ?? 0);
  const { maxFileBytes, reasons } = job;
  const overLimit = `file over the workspace write limit of ${maxFileBytes} bytes`;
  const directories = new Map<string, number | undefined>();
  // The process's own id rather than `/proc/self`: one link fewer for the kernel to follow on every open.
  const descriptors = `/proc/${process.pid}/fd/`;
  const buffers: ArrayBuffer[] = [];
  const table = new Float64Array(job.paths.length * FIELDS);
  const skips: string[] = [];
  const skipIndex = new Map<string, number>();
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
      if (!allowed(fs.readlinkSync(`${descriptors}${descriptor}`))) {
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
  const skip = (index: number, reason: string): void => {
    let at = skipIndex.get(reason);
    if (at === undefined) {
      at = skips.push(reason) - 1;
      skipIndex.set(reason, at);
    }
    table[index * FIELDS] = SKIPPED;
    table[index * FIELDS + 1] = at;
  };
  const place = (index: number, where: number, offset: number, length: number, executable: boolean): void => {
    const at = index * FIELDS;
    table[at] = length === 0 ? EMPTY : where;
    table[at + 1] = offset;
    table[at + 2] = length;
    table[at + 3] = executable ? 1 : 0;
  };
  const open = (source: string): number | string => {
    let path = source;
    if (job.pinDirectories) {
      const slash = source.lastIndexOf('/');
      const descriptor = directoryOf(slash <= 0 ? '/' : source.slice(0, slash));
      if (descriptor === undefined) return 'moved outside the allowed roots during hydration';
      path = `${descriptors}${descriptor}/${source.slice(slash + 1)}`;
    }
    try {
      return fs.openSync(path, OPEN_FLAGS);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ENOENT') return 'vanished during hydration';
      if (code === 'ELOOP') return 'became a symlink during hydration';
      return reasons.unreadable;
    }
  };
  /** Reads into `target` from `offset` up to its end or the file's: the bytes read. */
  const readInto = (descriptor: number, target: Uint8Array, offset: number, end: number): number => {
    let at = offset;
    while (at < end) {
      const read = fs.readSync(descriptor, target, at, end - at, null);
      if (read === 0) break;
      at += read;
    }
    return at - offset;
  };
  /** A file of unknown size (0 from `fstat`), read to its end into memory of its exact length; a string when skipped. */
  const readUnknown = (descriptor: number): Uint8Array | string => {
    let buffer = Buffer.allocUnsafeSlow(4096);
    let length = 0;
    for (;;) {
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
    const exact = new Uint8Array(length);
    exact.set(buffer.subarray(0, length));
    return exact;
  };

  /** Small files open and measured, waiting to be read into one slab. */
  const group: { index: number; descriptor: number; size: number; executable: boolean }[] = [];
  let groupBytes = 0;
  const readGroup = (): void => {
    if (group.length === 0) return;
    const slab = Buffer.allocUnsafeSlow(groupBytes);
    const where = buffers.push(slab.buffer as ArrayBuffer) - 1;
    let offset = 0;
    for (const file of group) {
      try {
        place(file.index, where, offset, readInto(file.descriptor, slab, offset, offset + file.size), file.executable);
      } catch {
        skip(file.index, reasons.unreadable);
      } finally {
        closeQuietly(file.descriptor);
      }
      offset += file.size;
    }
    group.length = 0;
    groupBytes = 0;
  };

  let count = 0;
  let bytes = 0;
  try {
    for (const source of job.paths) {
      const index = count;
      count += 1;
      const opened = open(source);
      if (typeof opened === 'string') {
        skip(index, opened);
        continue;
      }
      let grouped = false;
      try {
        const info = fs.fstatSync(opened);
        const executable = (info.mode & 0o100) !== 0;
        if (!info.isFile()) skip(index, reasons.special);
        else if (info.size > maxFileBytes) skip(index, overLimit);
        else if (info.size === 0) {
          const read = readUnknown(opened);
          if (typeof read === 'string') skip(index, read);
          else {
            if (read.byteLength > 0) buffers.push(read.buffer as ArrayBuffer);
            place(index, buffers.length - 1, 0, read.byteLength, executable);
            bytes += read.byteLength;
          }
        } else if (info.size >= OWN_FROM) {
          const own = Buffer.allocUnsafeSlow(info.size);
          const length = readInto(opened, own, 0, info.size);
          // Shorter than its memory (it shrank): kept at its exact length.
          buffers.push(length === info.size ? (own.buffer as ArrayBuffer) : own.buffer.slice(0, length));
          place(index, buffers.length - 1, 0, length, executable);
          bytes += length;
        } else {
          if (group.length === GROUP_FILES || groupBytes + info.size > SLAB_BYTES) readGroup();
          group.push({ index, descriptor: opened, size: info.size, executable });
          groupBytes += info.size;
          bytes += info.size;
          grouped = true;
        }
      } catch {
        skip(index, reasons.unreadable);
      } finally {
        if (!grouped) closeQuietly(opened);
      }
      if (bytes >= job.maxJobBytes) break;
    }
    readGroup();
  } finally {
    for (const file of group) closeQuietly(file.descriptor);
    for (const descriptor of directories.values()) if (descriptor !== undefined) closeQuietly(descriptor);
  }
  return { buffers, table, count, skips };
}
