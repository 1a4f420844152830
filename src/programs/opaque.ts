import { execFile } from 'node:child_process';

/** The overlay's mark on a directory that hides everything below it (userxattr mounts use the user. namespace). */
const OPAQUE_RECORD = /\d+ SCHILY\.xattr\.(?:user|trusted)\.overlay\.opaque=y\n/;

/**
 * Which of `dirs` (relative to `upper`) the overlay marked opaque: a directory removed and made again, so
 * nothing of the lower one shows through. Node cannot read extended attributes, so GNU tar (on every
 * Debian-like system) reads them for us, in one run for all the directories, without their content: the
 * cost is the number of directories asked about, never the size of the tree.
 */
export async function opaqueDirectories(upper: string, dirs: readonly string[]): Promise<Set<string>> {
  const opaque = new Set<string>();
  if (dirs.length === 0) return opaque;
  const archive = await new Promise<Buffer>((resolve, reject) => {
    const child = execFile(
      'tar',
      ['--format=posix', '--xattrs', '--xattrs-include=*.overlay.*', '--no-recursion', '--null', '-C', upper, '-cf', '-', '-T', '-'],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' } },
      (error, stdout) => (error === null ? resolve(stdout) : reject(error)),
    );
    child.stdin?.end(dirs.map((dir) => `./${dir}\0`).join(''));
  });
  // A pax extended header precedes the directory it describes: walk the 512-byte records in order.
  let pending: { opaque: boolean; path: string | undefined } | undefined;
  for (let offset = 0; offset + 512 <= archive.length;) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = parseInt(header.subarray(124, 136).toString('latin1').replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 0);
    const body = archive.subarray(offset + 512, offset + 512 + size);
    if (type === 'x') {
      const text = body.toString('utf8');
      pending = { opaque: OPAQUE_RECORD.test(text), path: /^\d+ path=(.*)$/m.exec(text)?.[1] };
    } else if (type !== 'g') {
      if (pending?.opaque === true) opaque.add((pending.path ?? entryName(header)).replace(/^\.\//, '').replace(/\/$/, ''));
      pending = undefined;
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return opaque;
}

/** A tar entry's name from its ustar header (prefix + name); a longer one comes in the pax `path` record before it. */
function entryName(header: Buffer): string {
  const field = (start: number, length: number) =>
    header
      .subarray(start, start + length)
      .toString('utf8')
      .replace(/\0.*$/s, '');
  const prefix = field(345, 155);
  const name = field(0, 100);
  return prefix === '' ? name : `${prefix}/${name}`;
}
