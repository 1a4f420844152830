import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a run of synchronous system calls goes before the event loop gets a turn. */
export const SLICE_MS = 4;

/**
 * Synchronous system calls in slices, with a turn of the event loop between them: a thread-pool hop per
 * call costs more than the calls themselves, and one long synchronous run (a first scan of a big root)
 * would hold every other request until it ends. Call `turn()` between units of work.
 */
export class TimeSlices {
  #start = performance.now();

  /** Starts a new slice now (at the start of a run of work). */
  restart(): void {
    this.#start = performance.now();
  }

  /** Gives the event loop a turn when the current slice has run SLICE_MS. */
  async turn(): Promise<void> {
    if (performance.now() - this.#start < SLICE_MS) return;
    await nextTurn();
    this.#start = performance.now();
  }
}
