import { existsSync } from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

// What the plan and the copy share: the reasons a host file is not read, and the pace of synchronous work.

export const UNREADABLE = 'unreadable';
export const SPECIAL = 'not a regular file or directory';

/** Whether host files are opened through pinned directory descriptors (see `readHostFiles`). */
export const PIN_DIRECTORIES = process.platform === 'linux' && existsSync('/proc/self/fd');

/** Lets the event loop run (aborts, timers, other requests) every few milliseconds of synchronous work. */
export class Pacer {
  #last = performance.now();

  due(): boolean {
    return performance.now() - this.#last >= PACE_MS;
  }

  async yield(): Promise<void> {
    await yieldToEventLoop();
    this.#last = performance.now();
  }

  async maybeYield(): Promise<void> {
    if (this.due()) await this.yield();
  }
}

const PACE_MS = 10;
