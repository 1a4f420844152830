import * as fs from 'node:fs';

/** A new file's permission bits: what git checks out for 100644 and 100755 (with the usual umask 022). */
export const NEW_FILE_MODE = 0o644;
export const NEW_EXECUTABLE_MODE = 0o755;

/** Git's reading of a host file's mode: executable (100755) when the owner may execute it. */
export function isExecutableMode(mode: number): boolean {
  return (mode & 0o100) !== 0;
}

/**
 * A file's permission bits with its executable bit set or cleared as `chmod +x` / `chmod -x` would under
 * git's 0644/0755 convention: setting adds execute for each class that may read (0644 → 0755, 0640 →
 * 0750, 0600 → 0700), clearing removes every execute bit; every other bit (setgid, sticky, read, write)
 * stays. `undefined` keeps the bits as they are.
 */
export function withExecutable(mode: number, executable: boolean | undefined): number {
  const bits = mode & 0o7777;
  if (executable === undefined) return bits;
  if (!executable) return bits & ~0o111;
  // The owner always gets it (git reads the owner's bit), even on a file the owner cannot read.
  return bits | ((bits & 0o444) >> 2) | 0o100;
}

/** The bits a new file gets. */
export function newFileMode(executable: boolean | undefined): number {
  return executable === true ? NEW_EXECUTABLE_MODE : NEW_FILE_MODE;
}

/**
 * Opens the regular file `abs` (a name in a pinned directory) without following a final link, so a name
 * swapped for a link since its resolution is refused (`ELOOP`), never chmod-ed through. Read-only when it
 * may be read, else write-only (its owner may chmod a file it cannot read).
 */
export function openNoFollow(abs: string): number {
  const flags = fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
  try {
    return fs.openSync(abs, fs.constants.O_RDONLY | flags);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EACCES') throw error;
    return fs.openSync(abs, fs.constants.O_WRONLY | flags);
  }
}
