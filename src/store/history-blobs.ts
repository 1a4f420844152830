import { sha256 } from '../snapshots/manifest.js';
import type { BlobStore } from '../workspace/driver.js';
import { CorruptDataError } from '../workspace/errors.js';
import { markReachable } from './reachable.js';

/**
 * A session's history as a store keeps it with its head: an index blob naming part blobs (one per turn), so
 * that a publish stores only the parts that changed (content-addressed: an unchanged turn is the same blob).
 * Each part lists the snapshot roots it names: the store's gc keeps them, so what the history can undo to
 * or fork from stays restorable as long as the head names the history.
 */
export interface HistoryDocument {
  /** What the history is as a whole (JSON). */
  meta: unknown;
  parts: HistoryPart[];
}

export interface HistoryPart {
  data: unknown;
  /** Root manifest hashes the part names. */
  roots: string[];
}

const FORMAT = 'sessionfs-history';
const VERSION = 1;
const HASH = /^[0-9a-f]{64}$/;

interface IndexBlob {
  format: typeof FORMAT;
  version: typeof VERSION;
  meta: unknown;
  parts: string[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Stores the document's blobs (those `stored` does not list yet; it gains them) and returns the index's
 * hash with every blob it names, with its bytes (a publish puts back any a collection deleted meanwhile).
 */
export async function writeHistory(
  blobs: BlobStore,
  document: HistoryDocument,
  stored: Set<string> = new Set(),
): Promise<{ hash: string; blobs: Map<string, Uint8Array> }> {
  const named = new Map<string, Uint8Array>();
  const put = async (value: unknown): Promise<string> => {
    const bytes = encoder.encode(JSON.stringify(value));
    const hash = sha256(bytes);
    if (!stored.has(hash)) {
      await blobs.put(hash, bytes);
      stored.add(hash);
      named.set(hash, bytes);
    }
    return hash;
  };
  const parts: string[] = [];
  for (const part of document.parts) {
    for (const root of part.roots) if (!HASH.test(root)) throw new CorruptDataError(`a history part names a malformed root ${root}`);
    parts.push(await put({ data: part.data, roots: part.roots }));
  }
  const index: IndexBlob = { format: FORMAT, version: VERSION, meta: document.meta, parts };
  return { hash: await put(index), blobs: named };
}

/** The document an index blob names; a blob that is missing or not a history is `CorruptDataError`. */
export async function readHistory(blobs: BlobStore, hash: string): Promise<HistoryDocument> {
  const index = await readIndex(blobs, hash);
  const parts: HistoryPart[] = [];
  for (const part of index.parts) parts.push(await readPart(blobs, part));
  return { meta: index.meta, parts };
}

/** Adds the history's blobs and everything below the roots it names to `seen` (what a collection keeps). */
export async function markHistoryReachable(blobs: BlobStore, hash: string, seen: Set<string>): Promise<void> {
  if (seen.has(hash)) return;
  const index = await readIndex(blobs, hash);
  seen.add(hash);
  for (const partHash of index.parts) {
    if (seen.has(partHash)) continue;
    const part = await readPart(blobs, partHash);
    seen.add(partHash);
    for (const root of part.roots) await markReachable(blobs, root, seen);
  }
}

async function readJson(blobs: BlobStore, hash: string, what: string): Promise<unknown> {
  if (!HASH.test(hash)) throw new CorruptDataError(`a session's ${what} names a malformed blob ${hash.slice(0, 80)}`);
  const bytes = await blobs.get(hash);
  if (bytes === undefined) throw new CorruptDataError(`a session's ${what} (blob ${hash}) is missing from the blob store`);
  try {
    return JSON.parse(decoder.decode(bytes)) as unknown;
  } catch {
    throw new CorruptDataError(`a session's ${what} (blob ${hash}) does not parse`);
  }
}

async function readIndex(blobs: BlobStore, hash: string): Promise<IndexBlob> {
  const index = (await readJson(blobs, hash, 'history')) as Partial<IndexBlob> | null;
  if (index?.format !== FORMAT || index.version !== VERSION || !Array.isArray(index.parts))
    throw new CorruptDataError(`blob ${hash} is not a ${FORMAT} index of version ${VERSION}`);
  return index as IndexBlob;
}

async function readPart(blobs: BlobStore, hash: string): Promise<HistoryPart> {
  const part = (await readJson(blobs, hash, 'history part')) as Partial<HistoryPart> | null;
  if (part === null || typeof part !== 'object' || !Array.isArray(part.roots) || part.roots.some((root) => !HASH.test(String(root))))
    throw new CorruptDataError(`blob ${hash} is not a history part`);
  return { data: part.data, roots: part.roots };
}
