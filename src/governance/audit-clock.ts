import { performance } from 'node:perf_hooks';

let wallOrigin = performance.timeOrigin;
let wallChecked = -Infinity;

/**
 * Keeps {@link wallClockAt} on the wall clock: compares the monotonic clock's origin with `Date.now()`, at
 * most once a second (`now`: a `performance.now()` reading just taken). A wall clock set or stepped since
 * (by more than its millisecond of rounding) is followed from then on.
 */
export function checkWallClock(now: number): void {
  if (now - wallChecked < 1000 && now >= wallChecked) return;
  wallChecked = now;
  const wall = Date.now();
  // Date.now() rounds down: the wall time lies in [wall, wall + 1).
  if (wallOrigin + now < wall - 1 || wallOrigin + now > wall + 2) wallOrigin = wall + 0.5 - now;
}

/**
 * The wall-clock time (ms since the epoch) of a `performance.now()` reading: an event's start and its
 * duration come from one clock, read twice per operation instead of three times.
 */
export function wallClockAt(reading: number): number {
  return wallOrigin + reading;
}

let isoMs = NaN;
let isoText = '';

/** `new Date(ms).toISOString()`, formatted once per millisecond: thousands of events share one. */
export function isoTime(ms: number): string {
  const whole = Math.floor(ms);
  if (whole !== isoMs) {
    isoMs = whole;
    isoText = new Date(whole).toISOString();
  }
  return isoText;
}
