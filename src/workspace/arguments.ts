import { InvalidArgumentError } from './errors.js';
import { nonNegativeInteger } from './limits.js';
import type { WriteMode, WriteOptions } from './types.js';

/**
 * A method's options argument: `undefined` and `null` count as absent (what JSON and strict-mode models send
 * for it), a plain object passes, anything else (a number, a string, an array) is `EINVAL`.
 */
export function optionsObject<O extends object>(value: O | null | undefined, operation: string): O {
  if (value === undefined || value === null) return {} as O;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${operation} options must be an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value;
}

const WRITE_MODES: readonly WriteMode[] = ['create', 'overwrite', 'append'];

/** A write's options, checked the same way for `write`, `writeBytes` and write streams. */
export function writeOptions(
  options: WriteOptions,
  shown: string,
): { mode: WriteMode; mimeType?: string; ifVersion?: number; executable?: boolean } {
  const mode = options.mode ?? 'overwrite';
  if (!WRITE_MODES.includes(mode))
    throw new InvalidArgumentError(`mode must be one of ${WRITE_MODES.join(', ')}, got ${String(mode)}`, shown);
  const mimeType = options.mimeType;
  if (mimeType !== undefined && typeof mimeType !== 'string') throw new InvalidArgumentError('mimeType must be a string', shown);
  const executable = options.executable;
  if (executable !== undefined && typeof executable !== 'boolean') throw new InvalidArgumentError('executable must be a boolean', shown);
  const checked: { mode: WriteMode; mimeType?: string; ifVersion?: number; executable?: boolean } = { mode };
  if (executable !== undefined) checked.executable = executable;
  if (mimeType !== undefined) checked.mimeType = mimeType;
  if (options.ifVersion !== undefined) checked.ifVersion = nonNegativeInteger(options.ifVersion, 'ifVersion');
  return checked;
}
