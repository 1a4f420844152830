import { InvalidArgumentError } from '../workspace/errors.js';
import type { WorkspaceLimits } from '../workspace/limits.js';
import { createSession } from '../session/create-session.js';
import type { RemoteSession } from '../session/types.js';
import type { SessionStore } from '../store/session-store.js';

export interface StoreNamespaceOptions {
  /** Where every user's workspace lives: heads and leases in the store's database, contents in its blobs. */
  store: SessionStore;
  /** The lease of an open user session (default 30 s), as in `createSession({ store })`. */
  leaseMs?: number;
  limits?: Partial<WorkspaceLimits>;
}

const PREFIX = 'user:';
/** A store session's limit on a session id. */
const MAX_SESSION_ID = 1024;
/** Kept as they are, so that ASCII ids stay readable in the store (`user:alice`); everything else is escaped. */
const PLAIN = /^[A-Za-z0-9._@-]$/;

/**
 * Per-user workspaces in a `SessionStore` (`new WorkspaceNamespace({ store })`): user `u` is the session
 * `user:` + the encoded id, so a user's workspace resumes on any machine, one writer at a time, and every
 * user shares the store's deduplicated blobs. Unlike a directory namespace (whose `open` returns a
 * workspace synchronously), everything here talks to the store, so `open` returns the user's session: its
 * `filesystem` is the workspace, and it publishes after each successful tool call and on `dispose()`.
 */
export class StoreNamespace {
  readonly kind = 'store';
  readonly #store: SessionStore;
  readonly #leaseMs: number | undefined;
  readonly #limits: Partial<WorkspaceLimits> | undefined;

  constructor(options: StoreNamespaceOptions) {
    const store = options.store as Partial<SessionStore> | null;
    if (store === null || typeof store !== 'object' || typeof store.acquire !== 'function' || typeof store.listSessions !== 'function')
      throw new InvalidArgumentError('store must be a SessionStore (e.g. postgresSessionStore)');
    this.#store = options.store;
    this.#leaseMs = options.leaseMs;
    this.#limits = options.limits;
  }

  /**
   * The user's session, created empty on first use; while another process holds it, `ConflictError` (as
   * `createSession({ store })`), unless `readOnly`. The caller disposes it, which publishes and releases the lease.
   */
  open(userId: string, options: { readOnly?: boolean } = {}): Promise<RemoteSession> {
    return createSession({
      store: this.#store,
      sessionId: sessionIdOf(userId),
      readOnly: options.readOnly === true,
      ...(this.#leaseMs === undefined ? {} : { leaseMs: this.#leaseMs }),
      ...(this.#limits === undefined ? {} : { limits: this.#limits }),
    });
  }

  /** Whether the user has a workspace in the store. */
  async has(userId: string): Promise<boolean> {
    return (await this.#store.head(sessionIdOf(userId))) !== undefined;
  }

  /** Every user id with a workspace, exactly as given to `open`, sorted. Other sessions of the store are not listed. */
  async list(): Promise<string[]> {
    const ids: string[] = [];
    for (const head of await this.#store.listSessions()) {
      const id = userIdOf(head.sessionId);
      if (id !== undefined) ids.push(id);
    }
    return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Removes the user's workspace (head and snapshots; its blobs go at the store's next `gc`); `false` when there was none. */
  async delete(userId: string): Promise<boolean> {
    const sessionId = sessionIdOf(userId);
    if ((await this.#store.head(sessionId)) === undefined) return false;
    await this.#store.deleteSession(sessionId);
    return true;
  }
}

/**
 * `user:` + the id with every character but `A-Z a-z 0-9 . _ @ -` written as `~` and its UTF-16 code unit
 * in four hex digits: reversible for any string (`''`, NUL, lone surrogates), and readable for plain ids.
 */
export function sessionIdOf(userId: unknown): string {
  if (typeof userId !== 'string') throw new InvalidArgumentError('a user id must be a string');
  let encoded = PREFIX;
  for (let index = 0; index < userId.length; index += 1) {
    const char = userId[index] as string;
    encoded += PLAIN.test(char) ? char : `~${userId.charCodeAt(index).toString(16).padStart(4, '0')}`;
  }
  if (encoded.length > MAX_SESSION_ID)
    throw new InvalidArgumentError(
      `a user id of a store namespace encodes to at most ${MAX_SESSION_ID - PREFIX.length} characters (each character outside A-Z a-z 0-9 . _ @ - takes 5); this one takes ${encoded.length - PREFIX.length}`,
    );
  return encoded;
}

/** The user id a session id encodes, or `undefined` for a session that is not a user's. */
export function userIdOf(sessionId: string): string | undefined {
  if (!sessionId.startsWith(PREFIX)) return undefined;
  let id = '';
  for (let index = PREFIX.length; index < sessionId.length;) {
    const char = sessionId[index] as string;
    if (char !== '~') {
      if (!PLAIN.test(char)) return undefined;
      id += char;
      index += 1;
      continue;
    }
    const hex = sessionId.slice(index + 1, index + 5);
    if (!/^[0-9a-f]{4}$/.test(hex)) return undefined;
    id += String.fromCharCode(Number.parseInt(hex, 16));
    index += 5;
  }
  // Only the canonical spelling: a hand-made `user:~0061` is not the user `a`.
  return sessionIdOf(id) === sessionId ? id : undefined;
}
