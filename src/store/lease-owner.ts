import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * Lease owners that say which process holds them. An owner is `sessionfs-owner:<boot>:<pidns>:<pid>:<uuid>`:
 * the machine's boot id, the process's pid namespace and its pid, then a random id (two sessions of one
 * process are two owners). A store may take over a lease at once when its owner is certainly gone: the
 * same boot and pid namespace as this process, and no process with that pid. A server killed with -9 and
 * started again then resumes its session without waiting out the lease. Anything less certain (another
 * machine or container, a pid now reused, a platform without `/proc`) waits for the expiry as before.
 */
const PREFIX = 'sessionfs-owner';

let here: { boot: string; pidns: string } | null | undefined;

/** This process's boot id and pid namespace, when the platform says (Linux `/proc`). */
function whereAmI(): { boot: string; pidns: string } | null {
  if (here !== undefined) return here;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pidns = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    here = /^[0-9a-f-]{36}$/.test(boot) && pidns !== undefined ? { boot, pidns } : null;
  } catch {
    here = null;
  }
  return here;
}

/** A new lease owner naming this process where the platform allows, else a random id. */
export function newLeaseOwner(): string {
  const place = whereAmI();
  if (place === null) return randomUUID();
  return `${PREFIX}:${place.boot}:${place.pidns}:${process.pid}:${randomUUID()}`;
}

/** True only when `owner` names a process of this boot and pid namespace that no longer exists. */
export function leaseOwnerIsGone(owner: string): boolean {
  const parts = owner.split(':');
  if (parts.length !== 5 || parts[0] !== PREFIX) return false;
  const place = whereAmI();
  if (place === null || parts[1] !== place.boot || parts[2] !== place.pidns) return false;
  const pid = Number(parts[3]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: a process exists (another user's); only ESRCH says there is none.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
