import { InvalidArgumentError } from './errors.js';

/** Limits on what a caller may create. Paths already on a host disk stay readable whatever their depth. */
export interface WorkspaceLimits {
  /** Most path segments a created path may have. Default 16. */
  maxPathDepth: number;
  /** Longest segment, in Unicode code points, a created path may have. Default 80. */
  maxSegmentLength: number;
  /** Most bytes one write call may carry. Default 32 MiB. */
  maxWriteBytes: number;
  /** Deadline of a glob or grep call that gives no `timeoutMs`, in milliseconds. Default 10 s. */
  searchTimeoutMs: number;
}

export const DEFAULT_LIMITS: Readonly<WorkspaceLimits> = Object.freeze({
  maxPathDepth: 16,
  maxSegmentLength: 80,
  maxWriteBytes: 32 * 1024 * 1024,
  searchTimeoutMs: 10_000,
});

export function resolveLimits(limits: Partial<WorkspaceLimits> | undefined): Readonly<WorkspaceLimits> {
  const resolved = { ...DEFAULT_LIMITS, ...stripUndefined(limits ?? {}) };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new InvalidArgumentError(`limits.${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return Object.freeze(resolved);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function nonNegativeInteger(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a non-negative whole number, got ${String(value)}`);
  }
  return value;
}
