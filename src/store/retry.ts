import { InvalidArgumentError, StoreUnavailableError } from '../workspace/errors.js';

/** How a remote store retries a request that failed for a reason that may pass (a restart, a 503, silence). */
export interface RetryOptions {
  /** Give up (`StoreUnavailableError`) once this much time has passed since the first attempt. Default 30 s. */
  deadlineMs?: number;
  /** One attempt that has not answered after this long is abandoned and retried. Default 10 s. */
  attemptTimeoutMs?: number;
  /** The first wait between attempts; it doubles (with jitter) up to 2 s. Default 50 ms. */
  baseDelayMs?: number;
}

const KEYS = new Set(['deadlineMs', 'attemptTimeoutMs', 'baseDelayMs']);

/** The options with their defaults, a bad one refused. */
export function resolveRetry(options: RetryOptions | undefined): Required<RetryOptions> {
  for (const key of Object.keys(options ?? {}))
    if (!KEYS.has(key)) throw new InvalidArgumentError(`retry does not take the option '${key}'`);
  const resolved = { deadlineMs: 30_000, attemptTimeoutMs: 10_000, baseDelayMs: 50, ...options };
  for (const [key, value] of Object.entries(resolved))
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new InvalidArgumentError(`retry.${key} must be a non-negative number`);
  return resolved;
}

/**
 * Runs `attempt` until it succeeds, fails for a reason `transient` does not accept (thrown as is), or the
 * deadline passes (`StoreUnavailableError` naming `what`, the attempts and the last failure). Each attempt
 * gets a signal aborted after `attemptTimeoutMs`; an attempt that ignores it is abandoned all the same.
 */
export async function withRetry<T>(
  what: string,
  attempt: (signal: AbortSignal) => Promise<T>,
  transient: (error: unknown) => boolean,
  options: Required<RetryOptions>,
): Promise<T> {
  const started = Date.now();
  let delay = options.baseDelayMs;
  for (let attempts = 1; ; attempts += 1) {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeLeft = options.deadlineMs - (Date.now() - started);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          controller.abort();
          reject(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' }));
        },
        Math.max(1, Math.min(options.attemptTimeoutMs, timeLeft)),
      );
    });
    try {
      return await Promise.race([attempt(controller.signal), timeout]);
    } catch (error) {
      if (!transient(error) && !controller.signal.aborted) throw error;
      // Retried until the deadline itself: the last wait is cut to what is left, so giving up means the
      // whole deadline passed, as the message says.
      const left = options.deadlineMs - (Date.now() - started);
      if (left <= 0)
        throw new StoreUnavailableError(
          `${what}: the store did not answer within ${options.deadlineMs} ms (${attempts} attempt(s), last: ${describeFailure(error)}); nothing was changed by the failed call`,
        );
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, delay * (0.5 + Math.random() / 2))));
      delay = Math.min(delay * 2, 2_000);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A failure in a few words, never a host path: an error code or status, or the error's class. */
export function describeFailure(error: unknown): string {
  const { code, name, $metadata } = (error ?? {}) as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } };
  const status = $metadata?.httpStatusCode;
  const parts = [
    typeof code === 'string' ? code : undefined,
    status === undefined ? undefined : `HTTP ${status}`,
    typeof name === 'string' ? name : undefined,
  ];
  return parts.filter((part) => part !== undefined).join(' ') || 'unknown error';
}
