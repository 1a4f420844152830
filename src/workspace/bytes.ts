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
