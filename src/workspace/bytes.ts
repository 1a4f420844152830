/**
 * A copy of `bytes` (or of `[start, end)` of them) that nobody else holds, as a plain `Uint8Array`: how
 * bytes cross the API, in and out. Never `bytes.slice()` for this: on a `Buffer` that is a view of the
 * same memory, not a copy. (`set` copies a megabyte several times faster than `new Uint8Array(bytes)`.)
 */
export function copyBytes(bytes: Uint8Array, start?: number, end?: number): Uint8Array {
  const source = start === undefined && end === undefined ? bytes : bytes.subarray(start, end);
  const copy = new Uint8Array(source.byteLength);
  copy.set(source);
  return copy;
}

/** Whether two byte arrays hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.byteLength !== b.byteLength) return false;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** Bytes their maker gave up to the shared layer (see {@link handOver}); weak, so nothing is kept for them. */
const handedOver = new WeakSet<Uint8Array>();

/**
 * Gives `bytes` up to the next `writeFiles` of a workspace built by `createWorkspace`, which keeps them
 * rather than copying them: for a maker that holds no other reference (hydration's freshly read files),
 * so nobody can change them afterwards. Internal: not exported from the package.
 */
export function handOver(bytes: Uint8Array): Uint8Array {
  handedOver.add(bytes);
  return bytes;
}

/** Bytes coming in through the API, as the workspace's own: handed-over ones as they are (once), any other copied. */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  return handedOver.delete(bytes) ? bytes : copyBytes(bytes);
}
