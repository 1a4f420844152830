import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { HydrateProgress } from '../sources/schema.js';
import { formatBytes } from '../text/format-bytes.js';
import type { SkippedPath } from '../workspace/types.js';

/** How a started session's hydration ended, as the client is told. */
export interface HydrationOutcome {
  files: number;
  bytes: number;
  /** What was left out and why (workspace paths only). */
  skipped: readonly SkippedPath[];
  /** A stored session that existed: resumed as stored, the mounts not read. */
  resumed?: boolean;
}

/** Sends a notification to the client (a call's own channel when it has one). */
export type Notify = (notification: ServerNotification) => Promise<void>;

/** At most one progress notification per waiting call this often, and one log line. */
const PROGRESS_INTERVAL_MS = 100;
const LOG_INTERVAL_MS = 500;
/** Skipped paths named in the closing log line; the rest are counted. */
const SKIPPED_SHOWN = 20;

/**
 * The course of `sessionfs mcp`'s hydration while the session starts after `initialize`: counts so far, then
 * how it ended. The server tells the client (see {@link hydrationNotices}); whoever hydrates reports here.
 */
export class HydrationFeed {
  #files = 0;
  #bytes = 0;
  #outcome: HydrationOutcome | 'failed' | undefined;
  readonly #listeners = new Set<() => void>();

  report(progress: HydrateProgress): void {
    this.#files = progress.files;
    this.#bytes = progress.bytes;
    this.#tell();
  }

  /** The session started (`outcome`), or did not (undefined). */
  finish(outcome: HydrationOutcome | undefined): void {
    if (this.#outcome !== undefined) return;
    this.#outcome = outcome ?? 'failed';
    if (outcome !== undefined) [this.#files, this.#bytes] = [outcome.files, outcome.bytes];
    this.#tell();
  }

  get files(): number {
    return this.#files;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get outcome(): HydrationOutcome | 'failed' | undefined {
    return this.#outcome;
  }

  /** Calls `listener` after every change; returns what stops it. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #tell(): void {
    for (const listener of this.#listeners) listener();
  }
}

/**
 * Tells the client how hydration goes: MCP log messages (`notifications/message`, level info, logger
 * `sessionfs.hydration`; the server declares `logging`) from the moment the client has initialized — where
 * it stands, then every half second, then how it ended with what was skipped — and, to each tool call that
 * waits for the session carrying a progress token, progress notifications (`progress` = files copied, and
 * `total` once done). Nothing names a host path: counts and workspace paths only. A message that cannot be
 * sent (the connection closed) is dropped.
 */
export function hydrationNotices(server: Server, feed: HydrationFeed) {
  let connected = false;
  let lastLog = -Infinity;
  const log = (data: string): void => {
    lastLog = performance.now();
    void Promise.resolve()
      .then(() => server.sendLoggingMessage({ level: 'info', logger: 'sessionfs.hydration', data }))
      .catch(() => undefined);
  };
  const tell = (): void => {
    if (!connected) return;
    const outcome = feed.outcome;
    if (outcome === undefined) {
      if (performance.now() - lastLog >= LOG_INTERVAL_MS) log(`hydrating the mounts: ${counts(feed)} so far`);
      return;
    }
    stop();
    if (outcome !== 'failed') log(closingLine(outcome));
  };
  const stop = feed.subscribe(tell);
  return {
    /** The client has initialized: log messages may go out now. */
    connected(): void {
      if (connected) return;
      connected = true;
      tell();
    },
    /**
     * The session, once ready; meanwhile, with a progress token, progress notifications to this call through
     * `notify` (the progress strictly increases, as MCP requires; throttled).
     */
    async waitFor<T>(ready: Promise<T>, token: ProgressToken | undefined, notify: Notify): Promise<T> {
      if (token === undefined || feed.outcome !== undefined) return ready;
      let sent = -1;
      let last = -Infinity;
      const send = (): void => {
        const outcome = feed.outcome;
        const files = feed.files;
        if (outcome === 'failed' || files <= sent) return;
        if (outcome === undefined && performance.now() - last < PROGRESS_INTERVAL_MS) return;
        sent = files;
        last = performance.now();
        const params =
          outcome === undefined
            ? { progressToken: token, progress: files, message: `hydrating the mounts: ${counts(feed)}` }
            : { progressToken: token, progress: files, total: files, message: `hydrated: ${counts(feed)}` };
        notify({ method: 'notifications/progress', params }).catch(() => undefined);
      };
      const unsubscribe = feed.subscribe(send);
      send();
      try {
        const value = await ready;
        // Ready may come before the feed hears the outcome: the last notification, with the total, goes out
        // (and is handed to the transport) before the call's answer.
        const files = feed.files;
        if (feed.outcome !== 'failed' && files > sent) {
          sent = files;
          const params = { progressToken: token, progress: files, total: files, message: `hydrated: ${counts(feed)}` };
          await notify({ method: 'notifications/progress', params }).catch(() => undefined);
        }
        return value;
      } finally {
        unsubscribe();
      }
    },
  };
}

export type HydrationNotices = ReturnType<typeof hydrationNotices>;

function counts(feed: { files: number; bytes: number }): string {
  return `${feed.files.toLocaleString('en-US')} files, ${formatBytes(feed.bytes)}`;
}

function closingLine(outcome: HydrationOutcome): string {
  if (outcome.resumed === true) return 'the stored session resumed as it was: the mounts seed only a new session and were not read';
  const head = `hydrated the mounts: ${counts(outcome)}`;
  if (outcome.skipped.length === 0) return `${head}; nothing skipped`;
  const shown = outcome.skipped.slice(0, SKIPPED_SHOWN).map((entry) => `\n  ${entry.path} (${entry.reason})`);
  const more = outcome.skipped.length - shown.length;
  return `${head}; skipped ${outcome.skipped.length}:${shown.join('')}${more > 0 ? `\n  … and ${more} more` : ''}`;
}
