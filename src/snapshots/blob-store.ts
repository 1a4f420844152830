import { copyBytes } from '../workspace/bytes.js';
import type { BlobStore } from '../workspace/driver.js';

/** A `BlobStore` in this process's memory: the default snapshotter's store when none is given. */
export function memoryBlobStore(): Required<BlobStore> & { readonly size: number } {
  const blobs = new Map<string, Uint8Array>();
  return {
    get size() {
      return blobs.size;
    },
    get: async (hash) => {
      const bytes = blobs.get(hash);
      return bytes === undefined ? undefined : copyBytes(bytes);
    },
    // Stored blobs are immutable: keep a private copy, never the caller's buffer.
    put: async (hash, bytes) => {
      if (!blobs.has(hash)) blobs.set(hash, copyBytes(bytes));
    },
    has: async (hash) => blobs.has(hash),
    delete: async (hash) => {
      blobs.delete(hash);
    },
    list: async function* () {
      yield* [...blobs.keys()];
    },
  };
}
