/**
 * Serialises async work per key (a path): concurrent writes and appends to one file run one after the
 * other, so none is lost; different paths run in parallel.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

/** Runs `task` holding every key's lock, taken in sorted order so that two callers never wait on each other. */
export function runLocked<T>(mutex: KeyedMutex, keys: readonly string[], task: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort();
  const step = (index: number): Promise<T> =>
    index === sorted.length ? task() : mutex.run(sorted[index] as string, () => step(index + 1));
  return step(0);
}
