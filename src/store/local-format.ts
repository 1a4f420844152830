import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import writeFileAtomic from 'write-file-atomic';
import { InvalidArgumentError, NotSupportedError, QuotaExceededError, StoreUnavailableError, WorkspaceError } from '../workspace/errors.js';

/** The marker file that says a directory is a local session store, and which layout it holds. */
export const MARKER = 'sessionfs-store.json';
export const FORMAT = 'sessionfs-local-store';
export const FORMAT_VERSION = 1;

/**
 * A host error from the store directory as a typed error naming what was being done, never the host path:
 * a full disk is `QuotaExceededError`, a directory that cannot be written `StoreUnavailableError`.
 */
export function storeWriteError(error: unknown, doing: string): WorkspaceError {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new QuotaExceededError(`the store directory is full: could not ${doing} (${code})`);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
    return new StoreUnavailableError(`the store directory is not writable: could not ${doing} (${code})`);
  if (code === 'ENOTDIR' || code === 'EEXIST')
    return new InvalidArgumentError(`the store directory is not a directory: could not ${doing}`);
  if (error instanceof WorkspaceError) return error;
  return new StoreUnavailableError(`could not ${doing} (${code ?? 'unknown error'})`);
}

/**
 * Makes `dir` a store (or checks that it is one), before anything else touches it: a directory holding
 * something else, or another version's store, is refused with nothing written or deleted; one that cannot
 * be written (read-only, no permission, full) is refused by a probe write.
 */
export function prepareStoreDir(dir: string): void {
  let entries: string[];
  try {
    mkdirSync(dir, { recursive: true });
    entries = readdirSync(dir);
  } catch (error) {
    throw storeWriteError(error, 'create the store directory');
  }
  if (entries.includes(MARKER)) checkMarker(readFileSync(`${dir}/${MARKER}`, 'utf8'));
  else if (entries.length > 0)
    throw new InvalidArgumentError(
      `the store directory is not empty and holds no ${MARKER}: it is not a session store; nothing was changed`,
    );
  probeWrite(dir);
  if (!entries.includes(MARKER)) {
    try {
      writeFileAtomic.sync(`${dir}/${MARKER}`, `${JSON.stringify({ format: FORMAT, version: FORMAT_VERSION })}\n`);
    } catch (error) {
      throw storeWriteError(error, 'write the store marker');
    }
  }
  try {
    for (const folder of ['blobs', 'sessions']) mkdirSync(`${dir}/${folder}`, { recursive: true });
  } catch (error) {
    throw storeWriteError(error, 'create the store folders');
  }
}

function checkMarker(text: string): void {
  let marker: unknown;
  try {
    marker = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError(`the store directory's ${MARKER} does not parse: it is not a session store; nothing was changed`);
  }
  const { format, version } = (marker ?? {}) as { format?: unknown; version?: unknown };
  if (format !== FORMAT) throw new InvalidArgumentError(`the store directory's ${MARKER} is not a ${FORMAT} marker; nothing was changed`);
  if (version !== FORMAT_VERSION)
    throw new NotSupportedError(
      `the store directory holds a ${FORMAT} of version ${String(version)}; this sessionfs reads version ${FORMAT_VERSION}; nothing was changed`,
    );
}

/** Writes, syncs and removes a small file: a read-only or full directory fails here, at start. */
function probeWrite(dir: string): void {
  const probe = `${dir}/.probe-${process.pid}-${Date.now()}`;
  let fd: number | undefined;
  try {
    fd = openSync(probe, 'wx');
    writeSync(fd, Buffer.alloc(4096));
    fsyncSync(fd);
  } catch (error) {
    throw storeWriteError(error, 'write a probe file');
  } finally {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(probe);
    } catch {
      // never created
    }
  }
}
