import { readManifest } from '../snapshots/manifest.js';
import type { BlobStore } from '../workspace/driver.js';

/** How many files (and links) a stored tree holds and their bytes, as a checkout of it would. */
export interface TreeSize {
  files: number;
  bytes: number;
}

/**
 * The size of the tree a root manifest names (`undefined`: the empty tree), read from its manifests only
 * (never a file's content). A directory that occurs twice counts twice, as it would on a disk, and is read
 * once: `seen` carries sizes between calls over one blob store (several sessions sharing their trees).
 */
export async function treeSize(blobs: BlobStore, root: string | undefined, seen = new Map<string, TreeSize>()): Promise<TreeSize> {
  if (root === undefined) return { files: 0, bytes: 0 };
  const known = seen.get(root);
  if (known !== undefined) return known;
  const size = { files: 0, bytes: 0 };
  for (const [, kind, hash, bytes] of await readManifest(blobs, root)) {
    if (kind === 'd') {
      const below = await treeSize(blobs, hash, seen);
      size.files += below.files;
      size.bytes += below.bytes;
    } else {
      size.files += 1;
      size.bytes += bytes;
    }
  }
  seen.set(root, size);
  return size;
}
