import * as fs from 'node:fs';
import type { DriverFileHandle, DriverStagedFile } from '../../workspace/driver.js';
import { FileNotFoundError, InvalidArgumentError, IsADirectoryError } from '../../workspace/errors.js';
import { displayPath, type NormalizedPath } from '../../workspace/paths.js';
import type { WriteMode } from '../../workspace/types.js';
import { tempPathIn } from './atomic.js';
import { newFileMode, withExecutable } from '../../host-files/file-mode.js';
import { READ_FLAGS } from '../../host-files/read-range.js';
import { readRange, readRangeAt } from '../../host-files/read-range.js';
import { hostError, type PinnedDir, type Resolved, type Sandbox } from '../../host-files/sandbox.js';

const TEMP_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
const COPY_CHUNK_BYTES = 1024 * 1024;

/** A regular file opened for reading (`target` resolved, links followed inside the root), its descriptor verified. */
export async function openVerified(
  sandbox: Sandbox,
  target: Resolved,
  path: NormalizedPath,
): Promise<{ handle: fs.promises.FileHandle; size: number }> {
  const shown = displayPath(path);
  assertRegularFile(target, shown);
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(target.abs, READ_FLAGS);
  } catch (error) {
    throw hostError(error, path);
  }
  try {
    await sandbox.verifyDescriptor(handle.fd, target.abs, shown);
    const st = await handle.stat();
    if (!st.isFile()) throw new IsADirectoryError(shown);
    return { handle, size: st.size };
  } catch (error) {
    await handle.close();
    throw hostError(error, path);
  }
}

/** ENOENT, EISDIR or EINVAL unless the resolved target is a regular file. */
function assertRegularFile(target: Resolved, shown: string): void {
  if (target.stat === undefined) throw new FileNotFoundError(shown);
  if (target.stat.isDirectory()) throw new IsADirectoryError(shown);
  if (!target.stat.isFile()) throw new InvalidArgumentError(`not a regular file: ${shown}`, shown);
}

/**
 * `target` opened and verified as {@link openVerified} does, without thread-pool round trips (open, the
 * descriptor's check and fstat take microseconds), and `range` of it read (see `readRangeAt`).
 */
export async function readVerified(
  sandbox: Sandbox,
  target: Resolved,
  path: NormalizedPath,
  range: { offset: number; length?: number },
): Promise<{ content: Uint8Array; sizeBytes: number }> {
  const shown = displayPath(path);
  assertRegularFile(target, shown);
  let fd: number;
  try {
    fd = fs.openSync(target.abs, READ_FLAGS);
  } catch (error) {
    throw hostError(error, path);
  }
  try {
    sandbox.verifyDescriptorSync(fd, target.abs, shown);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new IsADirectoryError(shown);
    return await readRangeAt(fd, st.size, range);
  } catch (error) {
    throw hostError(error, path);
  } finally {
    fs.closeSync(fd);
  }
}

/** A verified open file, read in ranges: what a read stream holds (the same inode until closed). */
export function fileHandle(handle: fs.promises.FileHandle, sizeBytes: number): DriverFileHandle {
  return {
    sizeBytes,
    read: async (offset, length) => (await readRange(handle, sizeBytes, { offset, length })).content,
    close: () => handle.close(),
  };
}

/**
 * A write stream's bytes on the host: a temp file (O_EXCL, never through a link) in the workspace root,
 * opened through the root's pinned descriptor, with the name every walk, list and snapshot hides. The
 * commit renames it into place (or links it, for `create`), so memory stays constant whatever the size.
 */
export class HostStagedFile implements DriverStagedFile {
  readonly #root: PinnedDir;
  readonly #temp: string;
  readonly #handle: fs.promises.FileHandle;
  readonly #open: Set<HostStagedFile>;
  #done = false;

  private constructor(root: PinnedDir, temp: string, handle: fs.promises.FileHandle, open: Set<HostStagedFile>) {
    this.#root = root;
    this.#temp = temp;
    this.#handle = handle;
    this.#open = open;
    open.add(this);
  }

  /**
   * `root` is the pinned root directory; the staged file owns it (released on commit or discard). `open`
   * holds the staged files not yet committed or discarded, for the driver's dispose to discard.
   */
  static async create(root: PinnedDir, open: Set<HostStagedFile>): Promise<HostStagedFile> {
    const temp = tempPathIn(root.path);
    try {
      return new HostStagedFile(root, temp, await fs.promises.open(temp, TEMP_FLAGS, 0o600), open);
    } catch (error) {
      root.release();
      throw error;
    }
  }

  async write(chunk: Uint8Array): Promise<void> {
    let done = 0;
    while (done < chunk.byteLength) done += (await this.#handle.write(chunk, done, chunk.byteLength - done)).bytesWritten;
  }

  /**
   * Puts the staged bytes at `targetAbs` in the pinned directory `dirAbs`: renamed over it (`overwrite`, or
   * `append` to nothing), linked to it (`create`: EEXIST when anything is there), or, for `append` to
   * `existing`, copied after the existing bytes into a new temp file renamed over it. The file keeps the
   * permission bits of the one it replaces, its executable bit set or cleared when `executable` says so.
   * Across filesystems (a mount inside the root) it is copied.
   */
  async placeAt(
    dirAbs: string,
    targetAbs: string,
    mode: WriteMode,
    existing: fs.Stats | undefined,
    executable: boolean | undefined,
  ): Promise<void> {
    const permissions = existing === undefined ? newFileMode(executable) : withExecutable(existing.mode, executable);
    await this.#handle.chmod(permissions);
    await this.#handle.close();
    if (mode === 'append' && existing !== undefined) {
      await replaceWith(targetAbs, await concatInto(dirAbs, [targetAbs, this.#temp], permissions));
    } else {
      let source = this.#temp;
      const put = mode === 'create' ? fs.promises.link : fs.promises.rename;
      try {
        await put(source, targetAbs);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        source = await concatInto(dirAbs, [this.#temp], permissions);
        await (mode === 'create' ? linkThenUnlink(source, targetAbs) : replaceWith(targetAbs, source));
      }
    }
    await this.discard();
  }

  async discard(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    this.#open.delete(this);
    await this.#handle.close().catch(() => undefined);
    // unlink, never rm: the temp name is ours, in a directory we hold by descriptor.
    await fs.promises.unlink(this.#temp).catch(() => undefined);
    this.#root.release();
  }
}

/** A new temp file in `dirAbs` holding the files at `sources` one after the other, read in chunks. */
async function concatInto(dirAbs: string, sources: readonly string[], permissions: number): Promise<string> {
  const temp = tempPathIn(dirAbs);
  const out = await fs.promises.open(temp, TEMP_FLAGS, permissions);
  const buffer = Buffer.alloc(COPY_CHUNK_BYTES);
  try {
    for (const source of sources) {
      const input = await fs.promises.open(source, READ_FLAGS);
      try {
        for (
          let read = await input.read(buffer, 0, buffer.byteLength);
          read.bytesRead > 0;
          read = await input.read(buffer, 0, buffer.byteLength)
        )
          await out.write(buffer, 0, read.bytesRead);
      } finally {
        await input.close();
      }
    }
    await out.chmod(permissions);
  } catch (error) {
    await out.close().catch(() => undefined);
    await fs.promises.unlink(temp).catch(() => undefined);
    throw error;
  }
  await out.close();
  return temp;
}

async function replaceWith(targetAbs: string, temp: string): Promise<void> {
  try {
    await fs.promises.rename(temp, targetAbs);
  } catch (error) {
    await fs.promises.unlink(temp).catch(() => undefined);
    throw error;
  }
}

async function linkThenUnlink(temp: string, targetAbs: string): Promise<void> {
  try {
    await fs.promises.link(temp, targetAbs);
  } finally {
    await fs.promises.unlink(temp).catch(() => undefined);
  }
}
