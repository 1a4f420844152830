import * as fs from 'node:fs';
import { promisify } from 'node:util';

/** Reads `range` of an open file of `size` bytes (fewer when it shrank meanwhile): a read's bytes and the size. */
export async function readRange(
  handle: fs.promises.FileHandle,
  size: number,
  range: { offset: number; length?: number },
): Promise<{ content: Uint8Array; sizeBytes: number }> {
  const { start, length } = clampRange(size, range);
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, start + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return { content: new Uint8Array(buffer.buffer, buffer.byteOffset, done), sizeBytes: size };
}

/** Where `range` starts in a file of `size` bytes and how many bytes of it there are. */
export function clampRange(size: number, range: { offset: number; length?: number }): { start: number; length: number } {
  const start = Math.min(range.offset, size);
  return { start, length: range.length === undefined ? size - start : Math.min(range.length, size - start) };
}

/** Reads and writes up to this size run synchronously: their system calls take microseconds, a thread-pool round trip each costs more. */
export const SYNC_IO_BYTES = 256 * 1024;

const readAsync = promisify(fs.read);

/**
 * Reads `range` of the open descriptor `fd` of a file of `size` bytes: synchronously when the range is
 * small (a thread-pool round trip per call was most of a small read's time), off the main thread otherwise.
 */
export async function readRangeAt(
  fd: number,
  size: number,
  range: { offset: number; length?: number },
): Promise<{ content: Uint8Array; sizeBytes: number }> {
  const { start, length } = clampRange(size, range);
  const buffer = Buffer.allocUnsafeSlow(length);
  let done = 0;
  while (done < length) {
    const read =
      length <= SYNC_IO_BYTES
        ? fs.readSync(fd, buffer, done, length - done, start + done)
        : (await readAsync(fd, buffer, done, length - done, start + done)).bytesRead;
    if (read === 0) break;
    done += read;
  }
  return { content: new Uint8Array(buffer.buffer, buffer.byteOffset, done), sizeBytes: size };
}
