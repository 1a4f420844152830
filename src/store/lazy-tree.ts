import type { DriverEntryKind } from '../workspace/driver.js';
import { guessMimeType } from '../workspace/mime.js';
import { fileKind, type ManifestEntry } from '../snapshots/manifest.js';

/** A file: `hash` set means its bytes are that blob; unset means changed since the last capture (`bytes` holds them). */
export interface LazyFile {
  kind: 'file';
  hash: string | undefined;
  bytes: Uint8Array | undefined;
  size: number;
  version: number;
  modifiedAt: number;
  mimeType: string | undefined;
  /** Git's 100755: the manifest line's kind `x`. */
  executable: boolean;
}

/**
 * A symlink: its target text is data, followed only inside the tree. `target` unset means not read yet (it
 * is the blob `hash`); `hash` unset means created since the last capture. `size` is the target's bytes.
 */
export interface LazyLink {
  kind: 'link';
  hash: string | undefined;
  target: string | undefined;
  size: number;
  modifiedAt: number;
}

/** A directory: `children` unset means not loaded yet (its manifest is `hash`); `hash` unset means changed below. */
export interface LazyDir {
  kind: 'dir';
  hash: string | undefined;
  children: Map<string, LazyNode> | undefined;
  modifiedAt: number;
}

export type LazyNode = LazyFile | LazyLink | LazyDir;

export function emptyDir(now = Date.now()): LazyDir {
  return { kind: 'dir', hash: undefined, children: new Map(), modifiedAt: now };
}

export function unloadedDir(hash: string, now = Date.now()): LazyDir {
  return { kind: 'dir', hash, children: undefined, modifiedAt: now };
}

/** A new link holding `target`, stored at the next capture. */
export function newLink(target: string, now = Date.now()): LazyLink {
  return { kind: 'link', hash: undefined, target, size: Buffer.byteLength(target), modifiedAt: now };
}

/** Marks a directory changed: its manifest is rewritten at the next capture. */
export function touch(directory: LazyDir, now: number): void {
  directory.hash = undefined;
  directory.modifiedAt = now;
}

export function driverKind(node: LazyNode): DriverEntryKind {
  return node.kind === 'dir' ? 'directory' : node.kind === 'link' ? 'symlink' : 'file';
}

/** The node a manifest line names, nothing of it loaded; `version` for a file. */
export function nodeOf([name, kind, hash, size]: ManifestEntry, version: () => number, now: number): LazyNode {
  if (kind === 'd') return unloadedDir(hash, now);
  if (kind === 'l') return { kind: 'link', hash, target: undefined, size, modifiedAt: now };
  const mimeType = guessMimeType(name);
  return { kind: 'file', hash, bytes: undefined, size, version: version(), modifiedAt: now, mimeType, executable: kind === 'x' };
}

/** The manifest line of a stored leaf (its hash set by the capture). */
export function leafEntry(name: string, node: LazyFile | LazyLink): ManifestEntry {
  return [name, node.kind === 'link' ? 'l' : fileKind(node.executable), node.hash as string, node.size];
}

/** A copy: a file is a new file (a new version), a link keeps its target, a clean directory is its manifest hash. */
export function cloneNode(node: LazyNode, nextVersion: () => number): LazyNode {
  if (node.kind === 'file') return { ...node, version: nextVersion(), modifiedAt: Date.now() };
  if (node.kind === 'link') return { ...node, modifiedAt: Date.now() };
  if (node.hash !== undefined) return unloadedDir(node.hash);
  const children = new Map([...(node.children as Map<string, LazyNode>)].map(([name, child]) => [name, cloneNode(child, nextVersion)]));
  return { kind: 'dir', hash: undefined, children, modifiedAt: Date.now() };
}
