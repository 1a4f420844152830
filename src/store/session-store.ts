import type { BlobStore } from '../workspace/driver.js';

/** A session's head as the store holds it. */
export interface SessionHead {
  sessionId: string;
  parentId: string | undefined;
  /** Root manifest hash; `undefined` for a session that never published anything. */
  root: string | undefined;
  /** Moves by one on every publish: the fencing token a publish must present. */
  version: number;
  /** The session's history as of this head (an index blob, see `writeHistory`); `undefined` when none was published with it. */
  history?: string;
}

/** What a publish hands over: the new root and the blobs stored since the last publish. */
export interface PublishRequest {
  sessionId: string;
  owner: string;
  /** The version this owner last saw; the head moves only if it is still current. */
  expectedVersion: number;
  /**
   * Stores what changed (blobs, then manifests) and returns the new root plus every blob stored or found
   * stored since the last publish, with its bytes: the store puts back any that a collection deleted in
   * between, before the head names them. Called once per publish, before the head moves and outside any
   * transaction or lock (an upload may take long; a collection may run meanwhile).
   */
  upload(): Promise<{
    root: string;
    blobs: Map<string, Uint8Array>;
    /** The history index blob published with this root. */ history?: string;
  }>;
  leaseMs: number;
  /**
   * This root is where the session starts (what `describeSession` reports as `base`, and `sessionfs sessions
   * diff` compares against): the first publish of a session seeded from host folders. Default: the base
   * stays the root the session was created with (its parent's head for a fork, else the empty tree).
   */
  base?: boolean;
}

/** A published root the store keeps besides the head (restorable; gc keeps its blobs). */
export interface RetainedRoot {
  version: number;
  root: string;
  publishedAt: Date;
}

/** What the store knows of a session: its head, where it began, its times, its lease and retained roots. */
export interface SessionInfo extends SessionHead {
  /** The root the session began from (`undefined`: the empty tree); gc keeps its blobs while the session lives. */
  base: string | undefined;
  createdAt: Date;
  /** When the head last moved (or the session was created). */
  updatedAt: Date;
  /** When the current lease expires; `undefined` when nobody holds it (or its owner is certainly gone). */
  leaseUntil: Date | undefined;
  /** Retained published roots, newest first (the head's among them once it published). */
  retained: RetainedRoot[];
}

/**
 * Where remote sessions keep every mutable fact (heads, leases, retained snapshots, collection state);
 * contents live in `blobs`. `postgresSessionStore` is the implementation; the interface is what
 * `createSession({ store })` needs, so another database can stand in.
 */
export interface SessionStore {
  readonly blobs: BlobStore;
  /** The head, or `undefined` when the session does not exist. */
  head(sessionId: string): Promise<SessionHead | undefined>;
  /**
   * Creates the session when absent (from `from`'s head when given: a fork) and takes its lease for
   * `owner`. Throws `ConflictError` while another owner holds an unexpired lease, unless that owner is
   * certainly gone (a process of this machine that no longer exists: see `lease-owner.ts`).
   */
  acquire(sessionId: string, owner: string, leaseMs: number, from?: string): Promise<SessionHead>;
  /** Extends the lease; `false` when `owner` no longer holds it. */
  renew(sessionId: string, owner: string, leaseMs: number): Promise<boolean>;
  release(sessionId: string, owner: string): Promise<void>;
  /** Moves the head by compare-and-swap on its version; `ConflictError` (nothing moved) when fenced off. */
  publish(request: PublishRequest): Promise<number>;
  deleteSession(sessionId: string): Promise<void>;
  listSessions(): Promise<SessionHead[]>;
  /** The session's head with its base, times, lease and retained roots; `undefined` when it does not exist. */
  describeSession(sessionId: string): Promise<SessionInfo | undefined>;
  /** Deletes blobs unreachable from every head, base and retained snapshot for longer than `graceMs`. */
  gc(options?: { graceMs?: number }): Promise<{ reachable: number; deleted: number; pending: number }>;
}
