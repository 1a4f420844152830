/**
 * Runs `task` over `items` with up to `window` of them under way at once and yields the results in the
 * items' order, so a loop that must decide in order still overlaps the I/O behind each step. A failure is
 * thrown when its item is reached; tasks already started after it settle unobserved.
 */
export async function* aheadInOrder<T, R>(items: readonly T[], window: number, task: (item: T) => Promise<R>): AsyncGenerator<R> {
  const running: Promise<R>[] = [];
  let next = 0;
  const fill = (): void => {
    while (next < items.length && running.length < window) {
      const started = task(items[next++] as T);
      started.catch(() => undefined);
      running.push(started);
    }
  };
  fill();
  while (running.length > 0) {
    const first = running.shift() as Promise<R>;
    fill();
    yield await first;
  }
}
