import { createHash } from 'node:crypto';
import { copyBytes } from '../workspace/bytes.js';
import type { BlobStore } from '../workspace/driver.js';
import { SnapshotRestoreError } from '../workspace/errors.js';
import { compareStrings } from '../workspace/paths.js';
import { joinPath } from '../workspace/paths.js';
import type { DiffEntry } from '../workspace/types.js';
import type { TreeChild, TreeReader } from './snapshot-tree.js';

/**
 * One line of a directory manifest: name, kind, content or manifest hash, size in bytes (0 for a
 * directory). Kinds are git's: `f` a file (100644), `x` an executable file (100755), `l` a symlink (120000:
 * its target text stored as a blob, as git stores it), `d` a directory. A manifest is the JSON array of its
 * lines sorted by name, stored as a blob under its own sha256, so equal directories have equal hashes
 * wherever they occur: the format every content-addressed snapshot in sessionfs shares (the default
 * snapshotter, remote sessions). A tree of plain files and directories hashes as it did before `x` and `l`.
 */
export type ManifestEntry = [name: string, kind: ManifestKind, hash: string, size: number];

export type ManifestKind = LeafKind | 'd';
/** What a manifest line holds besides a directory. */
export type LeafKind = 'f' | 'x' | 'l';

/** The manifest kind of a file with this executable bit. */
export const fileKind = (executable: boolean): LeafKind => (executable ? 'x' : 'f');

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The canonical bytes of a manifest (entries sorted by name). */
export function encodeManifest(entries: ManifestEntry[]): Uint8Array {
  entries.sort((a, b) => compareStrings(a[0], b[0]));
  return new TextEncoder().encode(JSON.stringify(entries));
}

/** Stores `bytes` under their hash unless already present; returns the hash. */
export async function putBlob(blobs: BlobStore, bytes: Uint8Array): Promise<string> {
  const hash = sha256(bytes);
  if (!(await blobs.has(hash))) await blobs.put(hash, bytes);
  return hash;
}

export async function readManifest(blobs: BlobStore, hash: string): Promise<ManifestEntry[]> {
  const bytes = await blobs.get(hash);
  if (bytes === undefined) throw new SnapshotRestoreError(`the snapshot's manifest ${hash} is missing from the blob store`);
  const entries = JSON.parse(new TextDecoder().decode(bytes)) as ManifestEntry[];
  for (const entry of entries)
    if (!KINDS.has(entry[1]))
      throw new SnapshotRestoreError(`the snapshot's manifest ${hash} holds an entry of unknown kind ${JSON.stringify(entry[1])}`);
  return entries;
}

const KINDS: ReadonlySet<unknown> = new Set(['f', 'x', 'l', 'd']);

/**
 * Appends to `out` the files and links that differ between two manifest trees (either side may be absent):
 * a leaf whose kind changes (a mode change, a file become a link) is modified, as in git.
 */
export async function diffManifests(
  blobs: BlobStore,
  path: string,
  left: string | undefined,
  right: string | undefined,
  out: DiffEntry[],
): Promise<void> {
  if (left === right) return;
  const before = new Map((left === undefined ? [] : await readManifest(blobs, left)).map((entry) => [entry[0], entry]));
  const after = new Map((right === undefined ? [] : await readManifest(blobs, right)).map((entry) => [entry[0], entry]));
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const l = before.get(name);
    const r = after.get(name);
    const childPath = joinPath(path, name);
    const leftLeaf = l !== undefined && l[1] !== 'd';
    const rightLeaf = r !== undefined && r[1] !== 'd';
    if (leftLeaf && rightLeaf) {
      if (l[1] !== r[1] || l[2] !== r[2]) out.push({ path: childPath, status: 'modified' });
      continue;
    }
    if (leftLeaf) out.push({ path: childPath, status: 'deleted' });
    if (rightLeaf) out.push({ path: childPath, status: 'added' });
    const leftDir = l?.[1] === 'd' ? l[2] : undefined;
    const rightDir = r?.[1] === 'd' ? r[2] : undefined;
    if (leftDir !== undefined || rightDir !== undefined) await diffManifests(blobs, childPath, leftDir, rightDir, out);
  }
}

/**
 * The tree a root manifest names, read from `blobs` as it is walked. Make one reader per blob store and
 * keep it: two trees read through the same reader compare unchanged directories by hash, without reading them.
 */
export function manifestReader(blobs: BlobStore): TreeReader<string> {
  const child = ([, kind, hash]: ManifestEntry): TreeChild<string> => {
    if (kind === 'd') return { kind: 'directory', directory: hash };
    const bytes = async (): Promise<Uint8Array> => {
      const stored = await blobs.get(hash);
      if (stored === undefined) throw new SnapshotRestoreError(`the snapshot's blob ${hash} is missing from the blob store`);
      return copyBytes(stored);
    };
    // The identity names the kind with the hash: equal bytes under another mode are a change.
    if (kind === 'l') return { kind: 'symlink', identity: `l:${hash}`, bytes };
    return { kind: 'file', executable: kind === 'x', identity: kind === 'x' ? `x:${hash}` : hash, bytes };
  };
  return {
    child: async (directory, name) => {
      const found = (await readManifest(blobs, directory)).find((entry) => entry[0] === name);
      return found === undefined ? undefined : child(found);
    },
    children: async (directory) => (await readManifest(blobs, directory)).map((entry) => [entry[0], child(entry)]),
  };
}
