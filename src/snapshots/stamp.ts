import { randomBytes } from 'node:crypto';

/**
 * Fresh snapshot ids and creation times at the cost of a counter, for backends whose snapshot is O(1) (a
 * random UUID and `toISOString` each cost more than the memory backend's whole snapshot).
 *
 * An id is UUID-shaped: 80 random bits drawn once per process (what keeps ids of different processes
 * apart) and a 48-bit counter shared by every workspace of the process, forks included (what keeps its own
 * apart).
 */
const random = randomBytes(10).toString('hex');
const head = `${random.slice(0, 8)}-${random.slice(8, 12)}-${random.slice(12, 16)}-${random.slice(16, 20)}-`;
let taken = 0;

export function nextSnapshotId(): string {
  taken += 1;
  return `${head}${taken.toString(16).padStart(12, '0')}`;
}

let formattedAt = Number.NaN;
let formatted = '';

/** The current time as ISO 8601 (milliseconds, UTC), formatted once per millisecond however many snapshots share it. */
export function isoNow(): string {
  const now = Date.now();
  if (now !== formattedAt) {
    formatted = new Date(now).toISOString();
    formattedAt = now;
  }
  return formatted;
}
