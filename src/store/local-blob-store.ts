import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { sha256 } from '../snapshots/manifest.js';
import type { BlobStore } from '../workspace/driver.js';
import { CorruptDataError, InvalidArgumentError } from '../workspace/errors.js';
import { storeWriteError } from './local-format.js';

const HASH = /^[0-9a-f]{64}$/;

export interface LocalBlobStoreOptions {
  /** The directory holding `ab/<sha256>` files. */
  dir: string;
  /** Where a blob that fails its check is moved (so the same content stored again repairs it). */
  quarantine: string;
  /** Remember every blob written, for `flush()` to sync before a head names it (survives power loss). */
  fsync: boolean;
}

/** A local blob store, and `flush()`: syncs to disk every blob (and its folder) written since the last flush. */
export interface LocalBlobStore extends Required<BlobStore> {
  flush(): Promise<void>;
}

/** How many files are synced at once: the file system commits them together, far faster than one by one. */
const SYNC_CONCURRENCY = 64;

/**
 * Blobs as files named by their sha256 (`ab/<hash>`), written atomically (a temp file renamed into place,
 * `write-file-atomic`), so a killed writer leaves a whole blob or none. Blobs are not synced one by one:
 * `flush()` syncs all written since, together, before the head that names them is written. Every read is
 * checked against its name: a corrupted blob is `CorruptDataError`, moved aside, and reported missing from
 * then on, so storing the same content again repairs it.
 */
export function localBlobStore(options: LocalBlobStoreOptions): LocalBlobStore {
  const { dir, quarantine, fsync } = options;
  const made = new Set<string>();
  let unsynced = new Set<string>();
  const pathOf = (hash: string): string => {
    if (typeof hash !== 'string' || !HASH.test(hash)) throw new InvalidArgumentError(`not a sha256 blob key: ${String(hash).slice(0, 80)}`);
    return `${dir}/${hash.slice(0, 2)}/${hash}`;
  };
  const exists = async (path: string): Promise<boolean> => {
    try {
      await stat(path);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw storeWriteError(error, 'read a blob');
    }
  };

  return {
    async flush() {
      const paths = [...unsynced];
      unsynced = new Set();
      try {
        for (let start = 0; start < paths.length; start += SYNC_CONCURRENCY)
          await Promise.all(paths.slice(start, start + SYNC_CONCURRENCY).map(syncPath));
      } catch (error) {
        for (const path of paths) unsynced.add(path);
        throw storeWriteError(error, 'sync blobs to disk');
      }
    },
    async get(hash) {
      const path = pathOf(hash);
      let bytes: Buffer;
      try {
        bytes = await readFile(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw storeWriteError(error, 'read a blob');
      }
      const actual = sha256(bytes);
      if (actual !== hash) {
        await mkdir(quarantine, { recursive: true }).catch(() => undefined);
        await rename(path, `${quarantine}/${hash}.${Date.now()}`).catch(() => undefined);
        throw new CorruptDataError(`blob ${hash} is corrupted: its bytes hash to ${actual}; it was moved aside`);
      }
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    async put(hash, bytes) {
      const path = pathOf(hash);
      if (!(bytes instanceof Uint8Array)) throw new InvalidArgumentError('blob bytes must be a Uint8Array');
      if (sha256(bytes) !== hash) throw new InvalidArgumentError(`blob bytes do not hash to ${hash}`);
      if (await exists(path)) return; // content-addressed: the stored file is these very bytes
      const folder = `${dir}/${hash.slice(0, 2)}`;
      try {
        if (!made.has(folder)) {
          await mkdir(folder, { recursive: true });
          made.add(folder);
        }
        // Written before the call returns: the caller may change `bytes` afterwards.
        await writeFileAtomic(path, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { fsync: false, mode: 0o644 });
        if (fsync) unsynced.add(path).add(folder);
      } catch (error) {
        throw storeWriteError(error, 'store a blob');
      }
    },
    has: (hash) => exists(pathOf(hash)),
    async delete(hash) {
      await unlink(pathOf(hash)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw storeWriteError(error, 'delete a blob');
      });
    },
    async *list() {
      for (const folder of await readdir(dir).catch(() => [] as string[])) {
        if (!/^[0-9a-f]{2}$/.test(folder)) continue;
        // A killed writer's temp file (`<hash>.<n>`) is not a blob.
        for (const name of await readdir(`${dir}/${folder}`).catch(() => [] as string[])) if (HASH.test(name)) yield name;
      }
    },
  };
}

/** fsync a file or a directory (a directory's sync makes the renames into it durable). */
async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
