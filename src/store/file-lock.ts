import lockfile from 'proper-lockfile';
import { StoreUnavailableError } from '../workspace/errors.js';

/** How long a lock left by a killed process stands before another process may break it. */
const STALE_MS = 5_000;

/**
 * A lock between processes (and, queued, between callers in this one) on a store directory: a `mkdir`-based
 * lock file (`proper-lockfile`) that its holder keeps fresh, and that a waiter breaks once it went stale
 * (its holder was killed). A caller that cannot take it within about 20 s gets `StoreUnavailableError`.
 */
export function directoryLock(dir: string, name: string): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  const lockfilePath = `${dir}/${name}`;
  const once = async <T>(work: () => Promise<T>): Promise<T> => {
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(dir, {
        lockfilePath,
        realpath: false,
        stale: STALE_MS,
        retries: { retries: 500, factor: 1.2, minTimeout: 1, maxTimeout: 50 },
        // Our critical sections are far shorter than the stale time: a compromise means this process was
        // paused for seconds, and its write is an atomic rename either way. Never an uncaught throw.
        onCompromised: () => undefined,
      });
    } catch (error) {
      throw new StoreUnavailableError(
        `the store is locked by another process (${(error as { code?: string }).code ?? 'error'}); try again`,
      );
    }
    try {
      return await work();
    } finally {
      await release().catch(() => undefined);
    }
  };
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(() => once(work));
    tail = run.catch(() => undefined);
    return run;
  };
}
