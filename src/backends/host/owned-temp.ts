import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { removeAt } from '../../host-files/remove-at.js';
import { pinDirectory, Sandbox, type PinnedDir } from '../../host-files/sandbox.js';
import { OWNED_TEMP_PREFIX } from '../../host-files/temp-prefix.js';

/**
 * Temp directories owned by this process, named `sessionfs-<kind>-<owner>-XXXXXX`, where `<owner>` is
 * `<pid>.<start>.<host>`: the owner's pid, its start time (from /proc; `0` where there is none, so a reused
 * pid is not taken for the owner) and a short hash of the host name and pid namespace (a sweeper judges only
 * processes it can see: another container sharing /tmp may have a live process with a pid this one does not
 * see, even under the same host name), see {@link hostTag}.
 *
 * They are removed when the process exits (an `exit` hook, for whatever was not disposed), and a later
 * process's {@link sweepStaleTemp} removes those whose owner is gone (`kill -9`). A sweeper claims a stale
 * directory by renaming it to a name it owns itself (rename is atomic, so of two sweepers exactly one wins,
 * and one killed mid-removal leaves a directory the next sweep removes); it claims only directories whose
 * owner is dead, so no process ever deletes another's live directory.
 */

const PREFIX = OWNED_TEMP_PREFIX;
const OWNED_NAME = /^sessionfs-([a-z]+(?:-[a-z]+)*)-(\d+)\.(\d+)\.([0-9a-f]{6})-[A-Za-z0-9]{6}$/;

/** Directories this process owns and has not removed yet. */
const live = new Set<string>();
let exitHookInstalled = false;
let sweptAtStart = false;

/** This process's owner token, `<pid>.<start>.<host>`, computed once (also in the names of atomic writes' temp files). */
let ownToken: string | undefined;
export function ownerToken(): string {
  ownToken ??= `${process.pid}.${processStart(process.pid) ?? 0}.${hostTag()}`;
  return ownToken;
}

let ownHost: string | undefined;
/**
 * Whose pids this process can judge: a short hash of the host name and the pid namespace. Containers of
 * one pod share a host name (and often /tmp) but not pids; a live process in another namespace would look
 * dead from here, so its names carry another tag and are never judged.
 */
export function hostTag(): string {
  ownHost ??= createHash('sha256').update(hostname()).update('\0').update(pidNamespace()).digest('hex').slice(0, 6);
  return ownHost;
}

/** The kernel's id of this process's pid namespace (Linux), or '' where there is none to read. */
function pidNamespace(): string {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

/**
 * Whether what an owner token names is stale: made on this host by a process that no longer runs. Another
 * host's owner is never judged (its processes cannot be seen from here), nor is a live one.
 */
export function ownerGone(pid: string, start: string, host: string): boolean {
  return host === hostTag() && !ownerAlive(Number(pid), Number(start));
}

/**
 * Creates a private temp directory owned by this process (real path returned), removed at exit unless
 * {@link removeOwnedTemp} removed it first. The first one a process creates sweeps stale ones, off the
 * current call.
 */
export function createOwnedTemp(kind: string, base = tmpdir()): string {
  if (!/^[a-z]+(?:-[a-z]+)*$/.test(kind)) throw new Error(`not a temp kind: ${kind}`);
  const dir = fs.realpathSync(fs.mkdtempSync(join(base, `${PREFIX}${kind}-${ownerToken()}-`)));
  live.add(dir);
  installExitHook();
  if (!sweptAtStart) {
    sweptAtStart = true;
    setImmediate(() => {
      try {
        sweepStaleTemp({ directory: base });
      } catch {
        // a sweep is best effort: the next start tries again
      }
    }).unref();
  }
  return dir;
}

/** Removes a directory made by {@link createOwnedTemp}, never following a link inside it. */
export function removeOwnedTemp(dir: string): void {
  live.delete(dir);
  removeTree(dir);
}

export interface SweepResult {
  /** Names of the stale directories removed (no paths). */
  removed: string[];
}

/**
 * Removes the temp directories in `directory` (default the OS temp dir) whose owner process has ended
 * without removing them (killed with `kill -9`, or crashed in a way that skipped `exit` hooks). Never
 * touches a directory whose owner is alive, one owned by another host, or one not named by this module.
 */
export function sweepStaleTemp(options: { directory?: string } = {}): SweepResult {
  const directory = options.directory ?? tmpdir();
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(directory).filter((name) => name.startsWith(PREFIX));
  } catch {
    return { removed };
  }
  for (const name of names) {
    const parsed = OWNED_NAME.exec(name);
    if (parsed === null) continue;
    const [, , pid = '', start = '', host = ''] = parsed;
    if (!ownerGone(pid, start, host)) continue;
    // Claim it under our own name first: whoever renames it owns its removal.
    const claimed = join(directory, `${PREFIX}swept-${ownerToken()}-${name.slice(-6)}`);
    try {
      fs.renameSync(join(directory, name), claimed);
    } catch {
      continue; // another sweeper took it, or it is gone
    }
    removeTree(claimed);
    removed.push(name);
  }
  return { removed };
}

/**
 * Whether the process that made a directory still runs (a reused pid with another start time does not
 * count). A zombie (killed, not yet reaped by its parent: the moments after a `kill -9`) runs no more.
 */
function ownerAlive(pid: number, start: number): boolean {
  if (pid === process.pid) return start === 0 || start === processStart(pid);
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it runs, under another user
  }
  const stat = processStat(pid);
  if (stat?.state === 'Z' || stat?.state === 'X') return false;
  if (start === 0) return true;
  return stat === undefined || stat.start === start;
}

/** A process's start time in clock ticks since boot (Linux /proc), or undefined where it cannot be read. */
function processStart(pid: number): number | undefined {
  return processStat(pid)?.start;
}

/** A process's state letter and start time (Linux /proc/<pid>/stat), or undefined where it cannot be read. */
function processStat(pid: number): { state: string; start: number | undefined } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return { state: fields[0] ?? '', start: Number.isSafeInteger(start) ? start : undefined };
  } catch {
    return undefined;
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const dir of live) removeTree(dir);
    live.clear();
  });
}

/**
 * Removes a directory tree, never following a link inside it. Never `fs.rm`: it re-checks each path before
 * acting on it, so a directory swapped for a link to the outside while it runs (by a program a shell left
 * running) would be emptied through the link. Pinned removal never follows one.
 */
export function removeTree(path: string): void {
  let parent: PinnedDir | undefined;
  try {
    parent = pinDirectory(new Sandbox(dirname(path)), '', '/');
    removeAt(parent, basename(path), '/');
  } catch {
    // already gone, or not ours to remove any more
  } finally {
    parent?.release();
  }
}
