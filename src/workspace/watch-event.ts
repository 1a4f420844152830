/** A change to an entry, as `workspace.watch()` reports it; paths are root-relative, as `list` shows them. */
export type WatchEvent =
  | { type: 'created' | 'modified' | 'deleted'; path: string }
  /**
   * The watcher's buffer was full and `dropped` events were lost (the slow consumer did not keep up):
   * anything under the watched path may have changed since; look again (e.g. `diff` against a snapshot).
   */
  | { type: 'overflow'; path: string; dropped: number };

export interface WatchOptions {
  /** Only changes to this path or below it. Default the root. */
  path?: string;
  /** Ends the iteration: it finishes normally, and events still buffered are not delivered. */
  signal?: AbortSignal;
  /** Most events held for a slow consumer before they are dropped and an `overflow` event is queued. Default 4096. */
  maxBuffered?: number;
}
