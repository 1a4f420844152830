import { AbortError, InvalidArgumentError, isWorkspaceError } from './errors.js';

/**
 * One progress event, the same for every long call (snapshot, restore, diff, patch, grep, glob, hydrate,
 * exportTo, writeBack, pushSnapshot, pullSnapshot).
 */
export interface Progress {
  /** What the call is doing now, e.g. `walk`, `search`, `capture`, `compare`, `apply`, `write`. */
  phase?: string;
  /**
   * Units of work done so far: an entry walked, a file read, compared or written. Never decreases during
   * a call, whatever the phase.
   */
  done: number;
  /** What `done` will reach, once known. The last event of a call that succeeds has `total === done`. */
  total?: number;
  /** The workspace path the latest unit concerned (never a host path). */
  path?: string;
}

export type ProgressListener = (progress: Progress) => void;

/**
 * What every long call accepts. An aborted call throws `AbortError` (`ABORT_ERR`) and changes nothing: the
 * signal is checked before the call and between its units of work. A call whose work is complete returns its
 * result even when the signal aborted meanwhile; a restore is honoured only until it starts changing files
 * (then it completes: the workspace ends exactly as before or exactly at the snapshot). A listener that
 * throws stops the call the same way, and the call fails with the listener's error.
 */
export interface LongCallOptions {
  signal?: AbortSignal;
  /** Called as the work goes on, then once more at the end with `total === done`. */
  onProgress?: ProgressListener;
}

/**
 * One long call's signal and progress, in the shared layer: validated once, the caller's signal and a
 * throwing listener folded into one `signal` to forward (its reason is the typed error the call rejects
 * with), `done` kept increasing, and the final event sent. A call with neither costs nothing.
 */
export class LongCall {
  /**
   * The shortest time between two events of `unit()` (the first unit of a phase is always reported): a
   * walk of a million entries sends a few hundred events, not a million. Tests set it to 0.
   */
  static intervalMs = 50;
  /** What to pass down to a snapshotter, a search or a nested long call. */
  readonly forward: LongCallOptions;
  readonly #listener: ProgressListener | undefined;
  readonly #controller: AbortController | undefined;
  #done = 0;
  #total: number | undefined;
  #phase: string | undefined;
  #failure: { error: unknown } | undefined;
  /** Stops listening to the caller's signal (a long-lived signal must not collect one listener per call). */
  #release: (() => void) | undefined;
  #final = false;
  /** Whether the latest event said `total === done`. */
  #complete = false;
  /** When `unit()` last sent an event, and for which phase. */
  #lastUnitEvent = -Infinity;
  #unitPhase: string | undefined;
  /** Whether units were counted since the latest event. */
  #unsent = false;

  private constructor(what: string, signal: AbortSignal | undefined, listener: ProgressListener | undefined) {
    this.#listener = listener;
    if (signal === undefined && listener === undefined) {
      this.forward = {};
      return;
    }
    const controller = new AbortController();
    this.#controller = controller;
    if (signal !== undefined) {
      const stop = (): void => controller.abort(new AbortError(`${what} was aborted`));
      if (signal.aborted) stop();
      else {
        signal.addEventListener('abort', stop, { once: true });
        this.#release = () => signal.removeEventListener('abort', stop);
      }
    }
    this.forward = { signal: controller.signal, onProgress: (progress) => this.report(progress) };
  }

  /** Checks the options (`EINVAL` for a signal or listener of the wrong type) and refuses an already aborted call. */
  static start(options: LongCallOptions | undefined, what: string): LongCall {
    const signal = options?.signal;
    const listener = options?.onProgress;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal must be an AbortSignal');
    if (listener !== undefined && typeof listener !== 'function') throw new InvalidArgumentError('onProgress must be a function');
    const call = new LongCall(what, signal, listener);
    call.check();
    return call;
  }

  /** Aborted once the caller aborts or the listener throws; its reason is the error to throw. */
  get signal(): AbortSignal | undefined {
    return this.#controller?.signal;
  }

  /** Units reported so far. */
  get done(): number {
    return this.#done;
  }

  /** Throws the call's error when it must stop. */
  check(): void {
    const signal = this.#controller?.signal;
    if (signal?.aborted === true) throw signal.reason;
  }

  /** One more unit done (then stops the call when it must). */
  step(phase: string, path?: string): void {
    if (this.#controller === undefined) return;
    this.tick(phase, path);
    this.check();
  }

  /** One more unit done, past the point where the call may stop (a restore changing files). */
  tick(phase: string, path?: string): void {
    if (this.#listener === undefined) return;
    this.report({ phase, done: this.#done + 1, ...(path === undefined ? {} : { path }) });
  }

  /**
   * One more unit of `phase` (an entry scanned, a file written), counted always but reported at a bounded
   * rate: at once when the phase changes, then at most once per `LongCall.intervalMs`. Then stops the call
   * when it must, unless `committed` (past the point where the call may stop: a restore changing files).
   * Synchronous, so work that never yields to the event loop (the host's stat scan) reports and stops too.
   */
  unit(phase: string, path?: string, committed = false): void {
    if (this.#controller === undefined) return;
    if (this.#listener !== undefined && this.#failure === undefined && !this.#final) {
      this.#done += 1;
      this.#complete = false;
      const now = performance.now();
      if (phase !== this.#unitPhase || now - this.#lastUnitEvent >= LongCall.intervalMs) {
        this.#lastUnitEvent = now;
        this.#unitPhase = phase;
        this.report({ phase, done: this.#done, ...(path === undefined ? {} : { path }) });
      } else this.#unsent = true;
    }
    if (!committed) this.check();
  }

  /** Sends the units `unit()` counted but did not report yet (at the end of a phase, or of a part of a call). */
  settle(): void {
    if (this.#unsent) this.report({ done: this.#done });
  }

  /**
   * Options for a call run as one part of this one (a mount's snapshot in a composition): its events go on
   * from this call's count (its own totals dropped: they are not this call's), its paths mapped by `path`;
   * this call's signal stops it.
   */
  part(path?: (inner: string) => string): LongCallOptions {
    if (this.#controller === undefined) return {};
    const options: LongCallOptions = { signal: this.#controller.signal };
    if (this.#listener === undefined) return options;
    const base = this.#done;
    options.onProgress = (progress) => {
      const event: Progress = { done: base + progress.done };
      if (progress.phase !== undefined) event.phase = progress.phase;
      if (progress.path !== undefined) event.path = path === undefined ? progress.path : path(progress.path);
      this.report(event);
    };
    return options;
  }

  /** Passes an event on to the listener, `done` never below what was reported before. */
  report(progress: Progress): void {
    if (this.#listener === undefined || this.#failure !== undefined || this.#final) return;
    const done = Math.max(this.#done, Number.isFinite(progress.done) ? progress.done : 0);
    this.#done = done;
    this.#unsent = false;
    if (progress.phase !== undefined) this.#phase = progress.phase;
    if (progress.total !== undefined && progress.total >= done) this.#total = progress.total;
    const event: Progress = { done };
    if (this.#phase !== undefined) event.phase = this.#phase;
    if (this.#total !== undefined && this.#total >= done) event.total = this.#total;
    if (progress.path !== undefined) event.path = progress.path;
    this.#complete = event.total === done;
    try {
      this.#listener(event);
    } catch (error) {
      this.#failure = { error };
      this.#controller?.abort(error);
    }
  }

  /** Runs the call's work; on success sends the final event (`total === done`), on an abort throws the typed error. */
  async run<T>(task: (call: LongCall) => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await task(this);
    } catch (error) {
      throw this.#reason(error);
    } finally {
      this.#release?.();
    }
    this.finish();
    return result;
  }

  /** The final event (`total === done`) unless the latest event was one. Later events are dropped. */
  finish(): void {
    if (this.#listener === undefined || this.#final) return;
    if (!this.#complete) this.report({ done: this.#done, total: this.#done });
    this.#final = true;
  }

  /**
   * What the call rejects with once it was stopped: a typed error reporting what was done (an export's
   * `ExportIncompleteError`) stands; otherwise the listener's error, or `AbortError` for what an abort caused
   * (the signal's DOMException, a wrapped abort).
   */
  #reason(error: unknown): unknown {
    const signal = this.#controller?.signal;
    if (signal?.aborted !== true) return error;
    if (isWorkspaceError(error) && !(error instanceof AbortError)) return error;
    if (this.#failure !== undefined) return this.#failure.error;
    if (error === signal.reason || error instanceof AbortError) return error;
    if (error instanceof Error && error.name === 'AbortError') return signal.reason;
    return error;
  }
}
