import { ownBytes } from './bytes.js';
import type { BackendDriver, DriverBulkEntry } from './driver.js';
import { fromDriverError } from './driver-errors.js';
import { InvalidArgumentError, IsADirectoryError, LimitExceededError } from './errors.js';
import type { WorkspaceLimits } from './limits.js';
import { checkLinkTarget } from './links.js';
import { assertCreatable, displayPath, splitPath, type NormalizedPath } from './paths.js';
import type { SkippedPath, WriteFilesEntry, WriteFilesResult } from './types.js';

/** A bulk write whose every path passed the checks: what to hand the driver, and what to report. */
export interface CheckedBulk {
  entries: DriverBulkEntry[];
  result: WriteFilesResult;
}

/**
 * Checks every entry of `writeFiles` before anything is written: the argument shapes, the path rules and
 * the policy (`admit`), the creation limits and the write size limit. Paths holding a name the driver
 * reserves are left out and reported, as a walk of a hostile tree would skip them.
 */
export async function checkBulkEntries(
  entries: readonly WriteFilesEntry[],
  limits: Readonly<WorkspaceLimits>,
  driver: BackendDriver,
  admit: (path: unknown, intent: 'file' | 'directory') => NormalizedPath | Promise<NormalizedPath>,
): Promise<CheckedBulk> {
  if (!Array.isArray(entries)) throw new InvalidArgumentError('writeFiles takes an array of entries');
  const checked: DriverBulkEntry[] = [];
  const skipped: SkippedPath[] = [];
  let files = 0;
  let bytes = 0;
  // Shaped, their bytes copied, before the first await: once writeFiles returns its promise the caller's buffers are its own again.
  const shapedEntries: Shaped[] = [];
  for (let index = 0; index < entries.length; index += 1) shapedEntries.push(shapeOf(entries[index]));
  for (let index = 0; index < shapedEntries.length; index += 1) {
    const shaped = shapedEntries[index] as Shaped;
    const admitted = admit(shaped.path, shaped.kind === 'directory' ? 'directory' : 'file');
    const path = typeof admitted === 'string' ? admitted : await admitted;
    const reserved = reservedReason(driver, path);
    if (reserved !== undefined) {
      skipped.push({ path: displayPath(path), reason: reserved });
      continue;
    }
    if (shaped.kind === 'directory') {
      if (path !== '') assertCreatable(path, limits);
    } else if (shaped.kind === 'symlink') {
      if (path === '') throw new IsADirectoryError('/');
      assertCreatable(path, limits);
    } else {
      assertWriteFits(path, shaped.content, limits);
      files += 1;
      bytes += shaped.content.byteLength;
    }
    // The shaped entry is this call's own object: with its path admitted, it is the driver's entry (no copy per entry).
    shaped.path = path;
    checked.push(shaped as DriverBulkEntry);
  }
  return { entries: checked, result: { files, bytes, skipped } };
}

/** What every file write checks before its lock: not the root, within the size limit, a creatable path. */
export function assertWriteFits(path: NormalizedPath, content: { byteLength: number }, limits: Readonly<WorkspaceLimits>): void {
  if (path === '') throw new IsADirectoryError('/');
  // A write stream's content is not held in memory at once: maxWriteBytes does not bound it (docs/governance.md, "Streaming large files").
  const byteLength = content instanceof Uint8Array ? content.byteLength : 0;
  if (byteLength > limits.maxWriteBytes) {
    const shown = displayPath(path);
    throw new LimitExceededError(`write of ${byteLength} bytes is over the limit of ${limits.maxWriteBytes} bytes: ${shown}`, shown);
  }
  assertCreatable(path, limits);
}

/** Runs the driver's bulk primitive, naming the failing entry in the error (never the driver's message). */
export async function runBulk(driver: BackendDriver, entries: DriverBulkEntry[]): Promise<void> {
  try {
    await driver.writeFiles?.(entries);
  } catch (error) {
    const named = (error as { path?: unknown } | undefined)?.path;
    const path = entries.find((entry) => entry.path === named)?.path ?? entries[0]?.path ?? '';
    throw fromDriverError(error, path);
  }
}

type Shaped =
  | { kind: 'directory'; path: unknown }
  | { kind: 'symlink'; path: unknown; target: string }
  | { kind: 'file'; path: unknown; content: Uint8Array; executable: boolean };

function shapeOf(entry: unknown): Shaped {
  if (entry === null || typeof entry !== 'object') throw new InvalidArgumentError('each writeFiles entry must be an object');
  const { kind, path, content, executable, target } = entry as Record<string, unknown>;
  if (kind === 'directory') return { kind, path };
  if (kind === 'symlink') {
    const refused = checkLinkTarget(target);
    if (refused !== undefined) throw new InvalidArgumentError(refused);
    return { kind, path, target: target as string };
  }
  if (kind !== 'file')
    throw new InvalidArgumentError(`a writeFiles entry's kind must be 'file', 'directory' or 'symlink', got ${String(kind)}`);
  if (!(content instanceof Uint8Array)) throw new InvalidArgumentError('a writeFiles file needs its content as a Uint8Array');
  if (executable !== undefined && typeof executable !== 'boolean') throw new InvalidArgumentError('executable must be a boolean');
  return { kind, path, content: ownBytes(content), executable: executable === true };
}

function reservedReason(driver: BackendDriver, path: NormalizedPath): string | undefined {
  if (driver.reservedName === undefined || path === '') return undefined;
  for (const segment of splitPath(path)) {
    const reason = driver.reservedName(segment);
    if (reason !== undefined) return reason;
  }
  return undefined;
}
