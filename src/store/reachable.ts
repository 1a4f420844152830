import { readManifest } from '../snapshots/manifest.js';
import type { BlobStore } from '../workspace/driver.js';

/** Adds `root` and everything below it to `seen`; a manifest already seen is not read again. */
export async function markReachable(blobs: BlobStore, root: string, seen: Set<string>): Promise<void> {
  if (seen.has(root)) return;
  seen.add(root);
  for (const [, kind, hash] of await readManifest(blobs, root)) {
    if (kind === 'd') await markReachable(blobs, hash, seen);
    else seen.add(hash);
  }
}
