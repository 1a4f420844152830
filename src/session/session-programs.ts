import type { ProgramRunner, ProgramRunnerOptions } from '../programs/runner.js';

/**
 * What runs `session.exec`'s programs: a runner made on first use (its mirror of a non-host workspace lives
 * as long as the workspace), let go when the workspace goes (a reset, dispose).
 */
export class SessionPrograms {
  readonly #options: ProgramRunnerOptions;
  #runner: Promise<ProgramRunner> | undefined;

  constructor(options: ProgramRunnerOptions) {
    this.#options = options;
  }

  runner(): Promise<ProgramRunner> {
    // Loaded when first used, as `fork`'s: a session that never runs a program starts without it.
    this.#runner ??= import('../programs/runner.js').then(({ ProgramRunner }) => new ProgramRunner(this.#options));
    return this.#runner;
  }

  /** Removes the programs' mirror of a workspace that is going away. */
  async close(): Promise<void> {
    const runner = this.#runner;
    this.#runner = undefined;
    if (runner !== undefined) (await runner.catch(() => undefined))?.dispose();
  }
}
