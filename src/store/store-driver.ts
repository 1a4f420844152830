import type { BlobStore } from '../workspace/driver.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { BlobTreeDriver } from './blob-tree-driver.js';

export interface StoreDriverOptions {
  /** Where file contents and directory manifests live (content-addressed): a `SessionStore`'s `blobs`, or any `BlobStore`. */
  blobs: BlobStore;
  /** The manifest hash of the tree to open (lazily: blobs are read on first access); omitted for an empty tree. */
  root?: string;
}

const STORE_DRIVER_OPTIONS: readonly string[] = ['blobs', 'root'];

/**
 * The driver of a workspace whose files live in a blob store, read lazily; its snapshots are manifest
 * hashes valid wherever the blobs are. `createSession({ store, sessionId })` builds a session on one; see
 * docs/scaling.md.
 */
export function storeDriver(options: StoreDriverOptions): BlobTreeDriver {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('storeDriver needs an options object');
  const unknown = Object.keys(options).filter((key) => !STORE_DRIVER_OPTIONS.includes(key));
  if (unknown.length > 0) throw new InvalidArgumentError(`storeDriver does not take ${unknown.join(', ')} (its options: blobs, root)`);
  const { blobs, root } = options;
  if (blobs === null || typeof blobs !== 'object' || typeof blobs.get !== 'function' || typeof blobs.put !== 'function')
    throw new InvalidArgumentError('blobs must be a BlobStore (get, put, has)');
  if (root !== undefined && (typeof root !== 'string' || !/^[0-9a-f]{64}$/.test(root)))
    throw new InvalidArgumentError('root must be a manifest hash (64 hex digits)');
  return new BlobTreeDriver(blobs, root);
}
