import type { BackendDriver, DriverEntryKind } from '../workspace/driver.js';
import { QuotaExceededError } from '../workspace/errors.js';
import { displayPath, type NormalizedPath } from '../workspace/paths.js';

/** Bytes and files (links count as files of no bytes). */
export interface Amount {
  bytes: number;
  files: number;
}

export const NOTHING: Readonly<Amount> = Object.freeze({ bytes: 0, files: 0 });

/** What an entry (a whole directory tree for a directory) holds, measured through the driver. */
export async function measure(driver: BackendDriver, path: NormalizedPath, kind: DriverEntryKind | undefined): Promise<Amount> {
  if (kind === undefined) return { ...NOTHING };
  if (kind !== 'directory') return { bytes: kind === 'file' ? (await driver.stat(path)).sizeBytes : 0, files: 1 };
  const total = { ...NOTHING };
  for await (const entry of driver.walk(path)) {
    if (entry.kind === 'directory') continue;
    total.files += 1;
    if (entry.kind === 'file') total.bytes += (await driver.stat(entry.path)).sizeBytes;
  }
  return total;
}

/**
 * A workspace's byte and file quotas. Usage is measured once (a walk of the whole workspace, at the first
 * mutation), then kept up to date by the workspace's own operations, each of which reserves its growth
 * before it runs and gives it back if it fails; a restore measures again. Changes made behind the
 * workspace's back (another process on a host directory) are counted at the next measure.
 */
export class QuotaLedger {
  readonly #driver: BackendDriver;
  readonly #limit: Amount;
  #used: Amount | undefined;
  #measuring: Promise<Amount> | undefined;

  constructor(driver: BackendDriver, quotaBytes: number | undefined, quotaFiles: number | undefined) {
    this.#driver = driver;
    this.#limit = { bytes: quotaBytes ?? Infinity, files: quotaFiles ?? Infinity };
  }

  /** Reserves `delta` (checked only where it grows), returning how to give it back. */
  async reserve(delta: Amount, path: NormalizedPath): Promise<() => void> {
    const used = await this.#current();
    const after = { bytes: used.bytes + delta.bytes, files: used.files + delta.files };
    const shown = displayPath(path);
    if (delta.bytes > 0 && after.bytes > this.#limit.bytes)
      throw new QuotaExceededError(`byte quota of ${this.#limit.bytes} would be exceeded (${after.bytes} bytes): ${shown}`, shown);
    if (delta.files > 0 && after.files > this.#limit.files)
      throw new QuotaExceededError(`file quota of ${this.#limit.files} would be exceeded (${after.files} files): ${shown}`, shown);
    used.bytes = after.bytes;
    used.files = after.files;
    return () => {
      used.bytes -= delta.bytes;
      used.files -= delta.files;
    };
  }

  /** Forget the figures (after a restore): the next reservation measures again. */
  invalidate(): void {
    this.#used = undefined;
    this.#measuring = undefined;
  }

  async #current(): Promise<Amount> {
    if (this.#used !== undefined) return this.#used;
    const measuring = (this.#measuring ??= measure(this.#driver, '', 'directory'));
    const used = await measuring;
    if (this.#measuring === measuring) this.#used = used;
    return used;
  }
}
