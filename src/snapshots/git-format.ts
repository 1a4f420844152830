import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { deflateSync } from 'node:zlib';

/** The pieces of git's patch format that are not hunks: names, object ids, binary literals. */

export const NULL_OID = '0'.repeat(40);

/** The git blob id of `bytes` (what `git hash-object` prints). */
export function blobOid(bytes: Uint8Array): string {
  return createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');
}

const C_ESCAPES: Record<number, string> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r', 34: '"', 92: '\\' };

/**
 * A name as git prints it with the default `core.quotePath`: unchanged when it is plain ASCII, otherwise
 * C-quoted with octal escapes for the UTF-8 bytes of anything else, so the patch is ASCII and unambiguous.
 */
export function quoteName(name: string): string {
  const bytes = Buffer.from(name, 'utf8');
  if (!bytes.some((byte) => byte < 0x20 || byte >= 0x7f || byte === 34 || byte === 92)) return name;
  let out = '"';
  for (const byte of bytes) {
    const escape = C_ESCAPES[byte];
    if (escape !== undefined) out += `\\${escape}`;
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}

const BASE85 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';

/** One `literal` hunk of a `GIT binary patch`: the zlib-deflated bytes in git's base85 lines, then a blank line. */
export function binaryLiteral(bytes: Uint8Array): string {
  const data = deflateSync(bytes);
  let out = `literal ${bytes.byteLength}\n`;
  for (let start = 0; start < data.length; start += 52) {
    const chunk = data.subarray(start, Math.min(start + 52, data.length));
    // The line's length: A-Z for 1-26 bytes, a-z for 27-52.
    out += chunk.length <= 26 ? String.fromCharCode(64 + chunk.length) : String.fromCharCode(96 + chunk.length - 26);
    for (let group = 0; group < chunk.length; group += 4) {
      let value = 0;
      for (let index = 0; index < 4; index += 1) value = value * 256 + (chunk[group + index] ?? 0);
      let encoded = '';
      for (let digit = 0; digit < 5; digit += 1) {
        encoded = (BASE85[value % 85] as string) + encoded;
        value = Math.floor(value / 85);
      }
      out += encoded;
    }
    out += '\n';
  }
  return `${out}\n`;
}

/**
 * Whether a patch shows `bytes` as text: not by git's test for binary (a NUL in the first 8000 bytes), and
 * valid UTF-8 (bytes that are not are binary here too, so a patch stays text).
 */
export function isText(bytes: Uint8Array): boolean {
  return !bytes.subarray(0, 8000).includes(0) && isUtf8(bytes);
}
