import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { SnapshotError } from '../../../workspace/errors.js';
import { ownerGone, ownerToken } from '../owned-temp.js';

/** Where the entries live, in the git dir (git ignores what it does not know there). */
const LOCKS = 'sessionfs-locks';
const ENTRY = /^(use|prune)-(\d+)\.(\d+)\.([0-9a-f]{6})-[0-9a-f]{16}$/;
/** How long a snapshot waits for a prune to end before it gives up (a prune walks every snapshot's trees). */
const WAIT_MS = 120_000;
const FIRST_PAUSE_MS = 2;
const MAX_PAUSE_MS = 50;

type Kind = 'use' | 'prune';

/**
 * Keeps a prune and the calls that rely on objects no ref reaches yet apart, across every workspace and
 * process on one git dir. A snapshot reuses the object ids its stat cache names and moves its ref only at
 * the end; a prune in between (by another process, or another workspace of this one) would remove objects
 * the new snapshot's tree names. Both sides register before they start, as an entry in the git dir's
 * `sessionfs-locks/` named with their owner token (pid, start time, host: see owned-temp.ts), then list the
 * others (the order of Dekker's algorithm: whichever lists second sees the other):
 *
 * - a user (snapshot, restore, diff, open) that sees a live prune withdraws and waits for it to end, then
 *   tries again (the prune's new token then makes it hash everything again);
 * - a prune that sees a live user withdraws and is skipped (the caller tries again later): a prune never
 *   waits, so the two never deadlock.
 *
 * Entries of processes that are gone (`kill -9` mid-snapshot or mid-prune) are ignored and removed; those
 * of another host cannot be judged and count as live. Several users, or several prunes, run together (two
 * prunes only remove what no ref reaches). This relies on a local filesystem: a file created by one process
 * is listed by the next `readdir` of any other.
 */
export class GitDirGate {
  readonly #dir: string;

  constructor(gitDir: string) {
    this.#dir = join(gitDir, LOCKS);
  }

  /** Runs `task` registered as a user of the git dir's objects, after any live prune has ended. */
  async use<T>(task: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + WAIT_MS;
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(MAX_PAUSE_MS, pause * 2)) {
      const mine = this.#register('use');
      if (mine === undefined || !this.#othersInclude('prune', mine)) {
        try {
          return await task();
        } finally {
          this.#withdraw(mine);
        }
      }
      this.#withdraw(mine);
      if (Date.now() > deadline) throw new SnapshotError('the snapshot git directory is being pruned by another process: try again later');
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** Runs `task` registered as a prune, unless a live user is registered: then `undefined`, nothing run. */
  async prune<T>(task: () => Promise<T>): Promise<T | undefined> {
    const mine = this.#register('prune');
    try {
      if (mine === undefined || this.#othersInclude('use', mine)) return undefined;
      return await task();
    } finally {
      this.#withdraw(mine);
    }
  }

  /** Creates this call's entry; undefined when the git dir cannot hold one (then a prune is skipped and a user runs unguarded). */
  #register(kind: Kind): string | undefined {
    const name = `${kind}-${ownerToken()}-${randomBytes(8).toString('hex')}`;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        fs.writeFileSync(join(this.#dir, name), '', { flag: 'wx' });
        return name;
      } catch (error) {
        if (attempt > 0 || (error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
        try {
          fs.mkdirSync(this.#dir, { recursive: true });
        } catch {
          return undefined;
        }
      }
    }
    return undefined;
  }

  #withdraw(name: string | undefined): void {
    if (name === undefined) return;
    try {
      fs.unlinkSync(join(this.#dir, name));
    } catch {
      // already removed
    }
  }

  /** Whether another live entry of `kind` is registered; entries of processes that are gone are removed. */
  #othersInclude(kind: Kind, mine: string): boolean {
    let names: string[];
    try {
      names = fs.readdirSync(this.#dir);
    } catch {
      return false;
    }
    let found = false;
    for (const name of names) {
      const parsed = ENTRY.exec(name);
      if (parsed === null || name === mine) continue;
      const [, entryKind, pid = '', start = '', host = ''] = parsed;
      if (ownerGone(pid, start, host)) this.#withdraw(name);
      else if (entryKind === kind) found = true;
    }
    return found;
  }
}
