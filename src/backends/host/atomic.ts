import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { SYNC_IO_BYTES } from '../../host-files/read-range.js';
import { ownerGone, ownerToken } from './owned-temp.js';
import { TEMP_NAME, TEMP_PREFIX } from '../../host-files/names.js';

/**
 * Atomic writes: content goes to a temp file in the target's own directory and is renamed over the
 * target, so a reader (or a crash) sees the old bytes or the new ones, never a torn file. `create` links
 * the temp file to the target (`link(2)` fails with EEXIST atomically, the O_EXCL of renames), so it is
 * both exclusive and atomic.
 *
 * Temp names have a fixed shape (see host-files/names.ts) that list, glob, grep, snapshots and restore
 * never show or capture.
 */

/**
 * Removes a temp file we created. Never `fs.rm`: even without `recursive`, Node's rm checks the path once to
 * refuse directories and again to remove it, and a directory swapped in between is emptied recursively,
 * by path (so through any link swapped in later).
 */
async function unlinkQuietly(path: string): Promise<void> {
  await fs.promises.unlink(path).catch(() => undefined);
}

function unlinkQuietlySync(path: string): void {
  try {
    fs.unlinkSync(path);
  } catch {
    // gone already, or replaced by something that is not ours
  }
}

/** Whether `name` is a temp file name whose writer (on this host) no longer runs; false for owner-less names. */
export function isStaleTempName(name: string): boolean {
  const parsed = name.startsWith(TEMP_PREFIX) ? TEMP_NAME.exec(name) : null;
  const [, pid, start, host] = parsed ?? [];
  return pid !== undefined && start !== undefined && host !== undefined && ownerGone(pid, start, host);
}

export function tempPathIn(dirAbs: string): string {
  return `${dirAbs}/${TEMP_PREFIX}${ownerToken()}-${randomBytes(8).toString('hex')}`;
}

/** Writes `content` to a fresh temp file (O_EXCL) in `dirAbs` with `mode`, returns its path. */
export async function writeTemp(dirAbs: string, content: Uint8Array, mode: number): Promise<string> {
  const temp = tempPathIn(dirAbs);
  const handle = await fs.promises.open(
    temp,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    mode,
  );
  try {
    await handle.writeFile(content);
    // The process umask must not decide the executable bit.
    await handle.chmod(mode);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlinkQuietly(temp);
    throw error;
  }
  await handle.close();
  return temp;
}

/** Replaces `targetAbs` (a file or a link, never followed) with `content`. */
export async function replaceFile(dirAbs: string, targetAbs: string, content: Uint8Array, mode: number): Promise<void> {
  const temp = await writeTemp(dirAbs, content, mode);
  try {
    await fs.promises.rename(temp, targetAbs);
  } catch (error) {
    await unlinkQuietly(temp);
    throw error;
  }
}

/** Creates `targetAbs` exclusively and atomically. EEXIST when anything (even a dangling link) is there. */
export async function createFileExclusive(dirAbs: string, targetAbs: string, content: Uint8Array, mode: number): Promise<void> {
  const temp = await writeTemp(dirAbs, content, mode);
  try {
    await fs.promises.link(temp, targetAbs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV') {
      // A filesystem without hard links: fall back to an exclusive open of the target itself.
      await unlinkQuietly(temp);
      await fs.promises.writeFile(targetAbs, content, { flag: 'wx', mode });
      return;
    }
    await unlinkQuietly(temp);
    throw error;
  }
  await unlinkQuietly(temp);
}

/** Creates (exclusively) or replaces `targetAbs` with `content`, atomically; synchronously when it is small. */
export async function placeFile(
  dirAbs: string,
  targetAbs: string,
  content: Uint8Array,
  mode: number,
  how: 'create' | 'replace',
): Promise<void> {
  const small = content.byteLength <= SYNC_IO_BYTES;
  if (how === 'create') {
    if (small) createFileExclusiveSync(dirAbs, targetAbs, content, mode);
    else await createFileExclusive(dirAbs, targetAbs, content, mode);
  } else if (small) replaceFileSync(dirAbs, targetAbs, content, mode);
  else await replaceFile(dirAbs, targetAbs, content, mode);
}

/** Replaces `targetAbs` with a symlink whose target text is `linkTarget` (temp link + rename). */
export async function replaceSymlink(dirAbs: string, targetAbs: string, linkTarget: string | Buffer): Promise<void> {
  const temp = tempPathIn(dirAbs);
  await fs.promises.symlink(linkTarget, temp);
  try {
    await fs.promises.rename(temp, targetAbs);
  } catch (error) {
    await unlinkQuietly(temp);
    throw error;
  }
}

/** Synchronous `writeTemp`. */
function writeTempSync(dirAbs: string, content: Uint8Array, mode: number): string {
  const temp = tempPathIn(dirAbs);
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    fs.writeFileSync(fd, content);
    fs.fchmodSync(fd, mode);
  } catch (error) {
    fs.closeSync(fd);
    unlinkQuietlySync(temp);
    throw error;
  }
  fs.closeSync(fd);
  return temp;
}

/**
 * Synchronous `replaceFile`, for restore's tight loop and small writes (no thread-pool round trips per
 * file).
 */
export function replaceFileSync(dirAbs: string, targetAbs: string, content: Uint8Array, mode: number): void {
  const temp = writeTempSync(dirAbs, content, mode);
  try {
    fs.renameSync(temp, targetAbs);
  } catch (error) {
    unlinkQuietlySync(temp);
    throw error;
  }
}

/** Synchronous `createFileExclusive`, for small writes. */
export function createFileExclusiveSync(dirAbs: string, targetAbs: string, content: Uint8Array, mode: number): void {
  const temp = writeTempSync(dirAbs, content, mode);
  try {
    fs.linkSync(temp, targetAbs);
  } catch (error) {
    unlinkQuietlySync(temp);
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV') throw error;
    // A filesystem without hard links: fall back to an exclusive open of the target itself.
    fs.writeFileSync(targetAbs, content, { flag: 'wx', mode });
    return;
  }
  unlinkQuietlySync(temp);
}

/** Synchronous `replaceSymlink`. */
export function replaceSymlinkSync(dirAbs: string, targetAbs: string, linkTarget: string | Buffer): void {
  const temp = tempPathIn(dirAbs);
  fs.symlinkSync(linkTarget, temp);
  try {
    fs.renameSync(temp, targetAbs);
  } catch (error) {
    unlinkQuietlySync(temp);
    throw error;
  }
}
