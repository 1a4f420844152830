/**
 * A copy of `bytes` (or of `[start, end)` of them) that nobody else holds, as a plain `Uint8Array`: how
 * bytes cross the API, in and out. Never `bytes.slice()` for this: on a `Buffer` that is a view of the
 * same memory, not a copy.
 */
export function copyBytes(bytes: Uint8Array, start?: number, end?: number): Uint8Array {
  return new Uint8Array(start === undefined && end === undefined ? bytes : bytes.subarray(start, end));
}
