import { AbortError, InvalidArgumentError, TimeoutError } from '../errors.js';
import { LongCall, type ProgressListener } from '../progress.js';

/** What a search call may carry to bound it: a deadline in milliseconds and the caller's abort signal. */
export interface SearchBounds {
  signal?: AbortSignal;
  timeoutMs?: number;
  onProgress?: ProgressListener;
}

/**
 * One search call's deadline: the caller's `timeoutMs` (or the workspace's `limits.searchTimeoutMs`) and
 * `signal` folded into one AbortSignal whose reason is the typed error the call rejects with
 * (`TimeoutError` / `AbortError`). The worker pool listens to it to stop a runaway regex mid-match.
 */
export class SearchDeadline {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #signal: AbortSignal | undefined;
  readonly #onCallerAbort = (): void => this.#controller.abort(new AbortError('the search was aborted'));
  /** The call's progress (and its listener's failure, which stops the search like an abort). */
  readonly progress: LongCall;

  constructor(bounds: SearchBounds, defaultTimeoutMs: number, what: string) {
    const timeoutMs = bounds.timeoutMs ?? defaultTimeoutMs;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new InvalidArgumentError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
    this.progress = LongCall.start(bounds, what);
    const signal = this.progress.signal;
    this.#timer = setTimeout(() => this.#controller.abort(new TimeoutError(`${what} passed its deadline of ${timeoutMs} ms`)), timeoutMs);
    this.#signal = signal;
    if (signal?.aborted === true) this.#onCallerAbort();
    else signal?.addEventListener('abort', this.#onCallerAbort, { once: true });
  }

  /** Aborted with the typed error once the deadline passes or the caller aborts. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Throws the typed error when the call must stop. */
  check(): void {
    if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
  }

  /** One more unit of the search done (an entry walked, a file searched): reported, then the deadline checked. */
  step(phase: 'walk' | 'search', path: string): void {
    this.progress.step(phase, path);
    this.check();
  }

  /** Runs `task` under the deadline, and always releases the timer and the caller's signal afterwards. */
  async run<T>(task: (deadline: SearchDeadline) => Promise<T>): Promise<T> {
    try {
      return await this.progress.run(() => task(this));
    } finally {
      clearTimeout(this.#timer);
      this.#signal?.removeEventListener('abort', this.#onCallerAbort);
    }
  }
}
