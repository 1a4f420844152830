import { InvalidArgumentError } from '../workspace/errors.js';

/** How much of its past a session keeps: `createSession({ retention })`. */
export interface RetentionOptions {
  /** History entries kept, newest; older ones are dropped. Default 1000; `Infinity` keeps all. */
  maxHistory?: number;
  /**
   * Snapshots taken before calls kept (what `rollbackTo` accepts), newest; older ones are released: the
   * backend frees what only they hold, and restoring one is a `SnapshotRestoreError` naming it. Default 100.
   */
  maxSnapshots?: number;
}

export interface Retention {
  maxHistory: number;
  maxSnapshots: number;
}

export const DEFAULT_RETENTION: Retention = { maxHistory: 1000, maxSnapshots: 100 };

export function validateRetention(value: RetentionOptions | undefined): Retention {
  if (value === undefined) return DEFAULT_RETENTION;
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError('retention must be an object');
  const limit = (name: keyof Retention): number => {
    const given = value[name];
    if (given === undefined) return DEFAULT_RETENTION[name];
    if (typeof given !== 'number' || !(given === Infinity || (Number.isInteger(given) && given >= 1)))
      throw new InvalidArgumentError(`retention.${name} must be a whole number of at least 1, or Infinity`);
    return given;
  };
  return { maxHistory: limit('maxHistory'), maxSnapshots: limit('maxSnapshots') };
}

/** Removes the oldest entries of `list` beyond `max`, and returns them (oldest first). */
export function dropOldest<T>(list: T[], max: number): T[] {
  return list.length > max ? list.splice(0, list.length - max) : [];
}
