import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { MountArgument } from './args.js';
import { UsageError } from './usage-error.js';

export interface StartFlags {
  root?: string;
  mounts: readonly MountArgument[];
  patchOut?: string;
  writeBack?: boolean;
  /** `--allow-write-back`: the `write_back` tool may write to the mounts, so they are checked as for `--write-back`. */
  allowWriteBack?: boolean;
}

/**
 * What the flags name on the host, checked before the session starts: `--root` must be an existing
 * directory (it is never created), the `--patch-out` file's directory must exist and be writable (and the
 * file must not be a directory), and every mount `--write-back` (or the `write_back` tool under `--allow-write-back`) writes to must exist and be writable. Found
 * only at exit, such a mistake lost the session's work. Each refusal is a usage error naming the flag and
 * the value the user gave (it goes to stderr, never to the model).
 */
export async function checkStartFlags(flags: StartFlags): Promise<void> {
  if (flags.root !== undefined) {
    const found = await kindOf(flags.root);
    if (found === undefined) throw new UsageError(`--root ${quote(flags.root)}: no such directory (it is not created: make it first)`);
    if (found !== 'directory') throw new UsageError(`--root ${quote(flags.root)} is not a directory`);
  }
  if (flags.patchOut !== undefined) await checkPatchOut(flags.patchOut);
  for (const flag of [
    flags.writeBack === true ? '--write-back' : undefined,
    flags.allowWriteBack === true ? '--allow-write-back' : undefined,
  ]) {
    if (flag === undefined) continue;
    const writable = flags.mounts.filter((mount) => mount.readOnly !== true);
    if (writable.length === 0) throw new UsageError(`${flag} has nothing to write to: every --mount is :ro`);
    for (const mount of writable) {
      const found = await kindOf(mount.hostPath);
      if (found === undefined) throw new UsageError(`${flag} cannot write to the mount ${quote(mount.hostPath)}: it does not exist`);
      if (!(await canWrite(mount.hostPath, found)))
        throw new UsageError(`${flag} cannot write to the mount ${quote(mount.hostPath)}: it is not writable`);
    }
  }
}

/** The `--patch-out` file can be written: not a directory, in an existing writable directory (a usage error otherwise). */
export async function checkPatchOut(patchOut: string): Promise<void> {
  const target = resolve(patchOut);
  if ((await kindOf(target)) === 'directory') throw new UsageError(`--patch-out ${quote(patchOut)} is a directory: give a file path`);
  const directory = dirname(target);
  const found = await kindOf(directory);
  if (found === undefined) throw new UsageError(`--patch-out ${quote(patchOut)}: its directory does not exist`);
  if (found !== 'directory') throw new UsageError(`--patch-out ${quote(patchOut)}: its parent is not a directory`);
  if (!(await canWrite(directory, found))) throw new UsageError(`--patch-out ${quote(patchOut)}: its directory is not writable`);
}

async function kindOf(path: string): Promise<'directory' | 'file' | undefined> {
  try {
    return (await stat(path)).isDirectory() ? 'directory' : 'file';
  } catch {
    return undefined;
  }
}

/** A file can be written; a directory can have entries made in it (write and search permission). */
async function canWrite(path: string, kind: 'directory' | 'file'): Promise<boolean> {
  return access(path, kind === 'directory' ? constants.W_OK | constants.X_OK : constants.W_OK).then(
    () => true,
    () => false,
  );
}

const quote = (value: string): string => JSON.stringify(value);
