import { InvalidArgumentError } from '../workspace/errors.js';
import { displayPath, normalizePath, type NormalizedPath } from '../workspace/paths.js';
import type { WatchEvent, WatchOptions } from '../workspace/watch-event.js';

const DEFAULT_MAX_BUFFERED = 4096;

/**
 * Hands change events to the workspace's watchers. Writers never wait for a watcher: each has a bounded
 * buffer; when it is full, further events are dropped (counted) until the consumer has drained it, then it
 * receives one `overflow` event with the count, in the place of what it lost.
 */
export class ChangeFeed {
  readonly #watchers = new Set<Watcher>();
  #closed = false;

  /** Whether anyone watches (changes are only worked out then). */
  get active(): boolean {
    return this.#watchers.size > 0;
  }

  emit(type: 'created' | 'modified' | 'deleted', path: NormalizedPath): void {
    for (const watcher of this.#watchers) watcher.offer(type, path);
  }

  watch(options: WatchOptions = {}): AsyncIterableIterator<WatchEvent> {
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('watch options must be an object');
    const base = normalizePath(options.path ?? '.');
    const max = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
    if (!Number.isSafeInteger(max) || max < 1)
      throw new InvalidArgumentError(`maxBuffered must be a positive whole number, got ${String(max)}`);
    const signal = options.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal must be an AbortSignal');
    const watcher = new Watcher(base, max, () => this.#watchers.delete(watcher));
    if (this.#closed || signal?.aborted) watcher.end();
    else {
      this.#watchers.add(watcher);
      if (signal !== undefined) watcher.endOn(signal);
    }
    return watcher;
  }

  /** Ends every watcher (the workspace was disposed). */
  close(): void {
    this.#closed = true;
    for (const watcher of [...this.#watchers]) watcher.end();
  }
}

class Watcher implements AsyncIterableIterator<WatchEvent> {
  readonly #base: NormalizedPath;
  readonly #max: number;
  readonly #detach: () => void;
  /** Buffered events from `#head` on (a queue that does not shift). */
  #events: WatchEvent[] = [];
  #head = 0;
  #dropped = 0;
  #ended = false;
  #waiting: ((result: IteratorResult<WatchEvent>) => void) | undefined;
  #unlisten: (() => void) | undefined;

  constructor(base: NormalizedPath, max: number, detach: () => void) {
    this.#base = base;
    this.#max = max;
    this.#detach = detach;
  }

  endOn(signal: AbortSignal): void {
    const onAbort = (): void => this.end();
    signal.addEventListener('abort', onAbort, { once: true });
    this.#unlisten = () => signal.removeEventListener('abort', onAbort);
  }

  offer(type: 'created' | 'modified' | 'deleted', path: NormalizedPath): void {
    const base = this.#base;
    if (base !== '' && path !== base && !path.startsWith(`${base}/`)) return;
    const event: WatchEvent = { type, path: displayPath(path) };
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting({ value: event, done: false });
    } else if (this.#dropped > 0 || this.#events.length - this.#head >= this.#max) this.#dropped += 1;
    else this.#events.push(event);
  }

  next(): Promise<IteratorResult<WatchEvent>> {
    if (this.#head < this.#events.length) {
      const value = this.#events[this.#head] as WatchEvent;
      this.#head += 1;
      if (this.#head === this.#events.length) {
        this.#events = [];
        this.#head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#dropped > 0) {
      const dropped = this.#dropped;
      this.#dropped = 0;
      return Promise.resolve({ value: { type: 'overflow', path: displayPath(this.#base), dropped }, done: false });
    }
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    if (this.#waiting !== undefined)
      return Promise.reject(new InvalidArgumentError('watch(): next() called again before the last call settled'));
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  /** `break` in a `for await` loop, or the consumer giving up: stop watching. */
  return(): Promise<IteratorResult<WatchEvent>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#events = [];
    this.#head = 0;
    this.#dropped = 0;
    this.#detach();
    this.#unlisten?.();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<WatchEvent> {
    return this;
  }
}
