import * as fs from 'node:fs';
import { promisify } from 'node:util';

/** O_NOFOLLOW: a file swapped for a link is not read through; O_NONBLOCK: a FIFO swapped in cannot block the open. */
export const READ_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

type Range = { offset: number; length?: number };
type RangeRead = { content: Uint8Array; sizeBytes: number };

/** Reads `range` of an open file of `size` bytes (fewer when it shrank meanwhile): a read's bytes and the size. */
export function readRange(handle: fs.promises.FileHandle, size: number, range: Range): Promise<RangeRead> {
  return fill(size, range, async (buffer, at, want, position) => (await handle.read(buffer, at, want, position)).bytesRead);
}

/** Where `range` starts in a file of `size` bytes and how many bytes of it there are. */
export function clampRange(size: number, range: Range): { start: number; length: number } {
  const start = Math.min(range.offset, size);
  return { start, length: range.length === undefined ? size - start : Math.min(range.length, size - start) };
}

/**
 * Reads and writes up to this size run synchronously: their system calls take microseconds, a thread-pool
 * round trip each costs more.
 */
export const SYNC_IO_BYTES = 256 * 1024;

const readAsync = promisify(fs.read);

/**
 * Reads `range` of the open descriptor `fd` of a file of `size` bytes: synchronously when the range is
 * small (a thread-pool round trip per call was most of a small read's time), off the main thread otherwise.
 */
export function readRangeAt(fd: number, size: number, range: Range): Promise<RangeRead> {
  const small = clampRange(size, range).length <= SYNC_IO_BYTES;
  return fill(size, range, async (buffer, at, want, position) =>
    small ? fs.readSync(fd, buffer, at, want, position) : (await readAsync(fd, buffer, at, want, position)).bytesRead,
  );
}

/** Reads the clamped range with `read` until it is full or the file ends. */
async function fill(
  size: number,
  range: Range,
  read: (buffer: Buffer, at: number, want: number, position: number) => Promise<number>,
): Promise<RangeRead> {
  const { start, length } = clampRange(size, range);
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const got = await read(buffer, done, length - done, start + done);
    if (got === 0) break;
    done += got;
  }
  return { content: new Uint8Array(buffer.buffer, buffer.byteOffset, done), sizeBytes: size };
}
