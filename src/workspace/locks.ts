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

  /** `task` holding every key of `keys` at once: see {@link runLocked}. */
  async runAll<T>(keys: ReadonlySet<string>, task: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The tails queued, in the order of `keys` (a bulk write holds hundreds of keys: no pair per key).
    const tails: Promise<void>[] = [];
    const before: Promise<void>[] = [];
    for (const key of keys) {
      const previous = this.#tails.get(key);
      const tail = previous === undefined ? current : previous.then(() => current);
      if (previous !== undefined) before.push(previous);
      this.#tails.set(key, tail);
      tails.push(tail);
    }
    await Promise.all(before);
    try {
      return await task();
    } finally {
      release();
      let index = 0;
      for (const key of keys) {
        if (this.#tails.get(key) === tails[index]) this.#tails.delete(key);
        index += 1;
      }
    }
  }
}

/**
 * Runs `task` holding every key's lock. The keys are queued on all at once (synchronously, so two callers
 * never wait on each other: whoever queued first on a key goes first on every key they share), then the
 * holders before it are awaited together: one promise per key, whatever the number of keys.
 */
export async function runLocked<T>(mutex: KeyedMutex, keys: readonly string[], task: () => Promise<T>): Promise<T> {
  if (keys.length === 1) return mutex.run(keys[0] as string, task);
  return mutex.runAll(new Set(keys), task);
}
