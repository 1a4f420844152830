import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { BlobTreeDriver } from '../store/blob-tree-driver.js';
import { newLeaseOwner } from '../store/lease-owner.js';
import type { SessionHead, SessionStore } from '../store/session-store.js';
import { memoryAuditSink } from '../governance/memory-sink.js';
import { AuditTrail } from '../history/audit-trail.js';
import { validatePolicy, type WorkspacePolicy } from '../governance/policy.js';
import { validateProtect } from '../governance/protect.js';
import type { HydrateResult } from '../sources/schema.js';
import { ConflictError, InvalidArgumentError, NotSupportedError } from '../workspace/errors.js';
import { createWorkspace } from '../workspace/create-workspace.js';
import { resolveLimits, type WorkspaceLimits } from '../workspace/limits.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import type { ExecOptions, ExecResult } from '../programs/types.js';
import { historyState, recordAuditInHistory, resumeHistory } from './history-hooks.js';
import { openWorkspaceSession } from './session.js';
import { loadHistory, rootOf, storeHistory } from './stored-history.js';
import { plant, seedOf, type Seed, type StoreSeedOptions } from './stored-seed.js';
import { callScope } from './tool-call.js';
import type { HydratedSession, RemoteSession, RunToolOptions, ToolCallResult, ToolDefinition } from './types.js';

/**
 * `createSession({ store, sessionId, … })`: a session whose head lives in a `SessionStore`; a new one may be
 * seeded from host folders (`sources`, see `StoreSeedOptions`).
 */
export interface StoreSessionOptions extends StoreSeedOptions {
  /** Where the session's head (and lease) and contents live: e.g. `postgresSessionStore`. */
  store: SessionStore;
  sessionId: string;
  /** How long the lease lasts without renewal; renewed every third of it while open. Default 30 s. */
  leaseMs?: number;
  /** Open a new session (new id, `parentId` = `sessionId`) from the same head instead of taking its lease. */
  fork?: boolean;
  /** Open the head read-only, without a lease: nothing is ever published. */
  readOnly?: boolean;
  limits?: Partial<WorkspaceLimits>;
  /** What this opening's workspace may touch, checked before every change (not stored with the session); seeding skips what it denies. */
  policy?: WorkspacePolicy;
  /** What the host provides read-only in this opening's workspace; default `.git`, `.hg`, `.svn`, `.jj`. See docs/security-model.md. */
  protect?: readonly string[];
}

const STORE_OPTIONS: readonly string[] = [
  'store',
  'sessionId',
  'leaseMs',
  'fork',
  'readOnly',
  'limits',
  'policy',
  'protect',
  'sources',
  'allowedHostRoots',
  'seed',
  'onProgress',
  'signal',
];

/**
 * Opens (or creates) a session from a store. Opening is O(1): the workspace is built on the head's root
 * manifest and reads blobs lazily on first access. While another owner holds an unexpired lease it throws
 * `ConflictError` naming the expiry; `fork` opens a copy instead, `readOnly` a view. With `sources`, a new
 * session is seeded (hydrated, then published as its first head); if seeding fails, the session it
 * created is deleted again, so nothing is left stored.
 */
export async function openStoredSession(options: StoreSessionOptions): Promise<RemoteSession> {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('createSession needs an options object');
  const unknown = Object.keys(options).filter((key) => !STORE_OPTIONS.includes(key));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`a store session does not take ${unknown.join(', ')} (its options: ${STORE_OPTIONS.join(', ')})`);
  const { store, sessionId } = options;
  if (store === null || typeof store !== 'object' || typeof store.acquire !== 'function' || typeof store.head !== 'function')
    throw new InvalidArgumentError('store must be a SessionStore (e.g. postgresSessionStore)');
  if (typeof sessionId !== 'string' || sessionId === '' || sessionId.length > 1024)
    throw new InvalidArgumentError('sessionId must be a non-empty string of at most 1024 characters');
  const leaseMs = options.leaseMs ?? 30_000;
  if (!Number.isInteger(leaseMs) || leaseMs < 1000) throw new InvalidArgumentError('leaseMs must be an integer of at least 1000');
  // Bad limits, policy, protect or sources are refused before anything is taken.
  resolveLimits(options.limits);
  if (options.policy !== undefined) validatePolicy(options.policy);
  validateProtect(options.protect);
  const seed = seedOf(options);
  // Names this process, so that a store can give the lease to the next process at once if this one is killed.
  const owner = newLeaseOwner();
  if (options.readOnly === true) {
    const head = (await store.head(sessionId)) ?? { sessionId, parentId: undefined, root: undefined, version: 0 };
    return openHead(options, head, owner, leaseMs, undefined);
  }
  const existed = seed === undefined || (await store.head(sessionId)) !== undefined;
  const head = await store.acquire(
    options.fork === true ? randomUUID() : sessionId,
    owner,
    leaseMs,
    options.fork === true ? sessionId : undefined,
  );
  try {
    return await openHead(options, head, owner, leaseMs, seed);
  } catch (error) {
    // A seed that failed leaves no session behind (deleted while the lease still fences others off).
    if (!existed) await store.deleteSession(head.sessionId).catch(() => undefined);
    // Nothing taken is left held: the next open of this session must not wait out the lease.
    await store.release(head.sessionId, owner).catch(() => undefined);
    throw error;
  }
}

/** The session over a head just read or acquired; seeded first when `seed` says so (then published at once). */
async function openHead(
  options: StoreSessionOptions,
  head: SessionHead,
  owner: string,
  leaseMs: number,
  seed: Seed | undefined,
): Promise<RemoteSession> {
  const driver = new BlobTreeDriver(options.store.blobs, head.root, { trackUnpublished: true });
  // Each operation of the history keeps the audit events it caused (what `sessionfs inspect` shows per call).
  const audit = memoryAuditSink();
  const workspace = createWorkspace(driver, {
    audit: [audit],
    readOnly: options.readOnly === true,
    limits: options.limits,
    ...(options.policy === undefined ? {} : { policy: options.policy }),
    ...(options.protect === undefined ? {} : { protect: options.protect }),
  });
  try {
    const hydration = seed === undefined ? undefined : await plant(seed, head, workspace);
    const inner = await openWorkspaceSession({ id: head.sessionId, workspace });
    recordAuditInHistory(inner, new AuditTrail(audit));
    // The history published with the head goes on here (undo, redo and blame across openings).
    if (head.history !== undefined) {
      const state = await loadHistory(options.store.blobs, head.history);
      const last = state.head === undefined ? undefined : state.snapshots[state.head];
      resumeHistory(inner, state, hydration === undefined && last !== undefined && rootOf(last) === head.root);
    }
    const session = new StoredSession(inner, driver, options.store, head, owner, leaseMs, options.readOnly === true, hydration);
    if (hydration !== undefined) {
      try {
        await session.publishSeed();
      } catch (error) {
        await session.abandon();
        throw error;
      }
    }
    return session;
  } catch (error) {
    await workspace.dispose().catch(() => undefined);
    throw error;
  }
}

class StoredSession implements RemoteSession {
  readonly #inner: HydratedSession;
  readonly #driver: BlobTreeDriver;
  readonly #store: SessionStore;
  readonly #owner: string;
  readonly #leaseMs: number;
  readonly #readOnly: boolean;
  readonly #head: SessionHead;
  readonly #hydration: HydrateResult | undefined;
  readonly #renewal: NodeJS.Timeout | undefined;
  #leaseLost = false;
  /** History blobs this session stored (a publish stores only the turns that changed). */
  readonly #historyBlobs = new Set<string>();
  #publishing: Promise<number> | undefined;
  #disposed = false;

  constructor(
    inner: HydratedSession,
    driver: BlobTreeDriver,
    store: SessionStore,
    head: SessionHead,
    owner: string,
    leaseMs: number,
    readOnly: boolean,
    hydration: HydrateResult | undefined,
  ) {
    this.#inner = inner;
    this.#driver = driver;
    this.#store = store;
    this.#head = { ...head };
    this.#owner = owner;
    this.#leaseMs = leaseMs;
    this.#readOnly = readOnly;
    this.#hydration = hydration;
    if (!readOnly) {
      this.#renewal = setInterval(() => void this.#renew(), Math.floor(leaseMs / 3));
      this.#renewal.unref();
    }
  }

  get id(): string {
    return this.#inner.id;
  }
  get parentId(): string | undefined {
    return this.#head.parentId;
  }
  get version(): number {
    return this.#head.version;
  }
  get filesystem(): SnapshotableWorkspace {
    return this.#inner.filesystem;
  }
  get snapshots(): readonly WorkspaceSnapshot[] {
    return this.#inner.snapshots;
  }
  get calls(): HydratedSession['calls'] {
    return this.#inner.calls;
  }

  turn(label?: string): Promise<string> {
    return this.#inner.turn(label);
  }

  history(): ReturnType<HydratedSession['history']> {
    return this.#inner.history();
  }

  /** Published like a successful call. */
  async undo(options?: Parameters<HydratedSession['undo']>[0]): ReturnType<HydratedSession['undo']> {
    const done = await this.#inner.undo(options);
    if (!this.#readOnly) await this.publish();
    return done;
  }

  async redo(options?: Parameters<HydratedSession['redo']>[0]): ReturnType<HydratedSession['redo']> {
    const done = await this.#inner.redo(options);
    if (!this.#readOnly) await this.publish();
    return done;
  }

  blame(path: string): ReturnType<HydratedSession['blame']> {
    return this.#inner.blame(path);
  }

  get outputs(): HydratedSession['outputs'] {
    return this.#inner.outputs;
  }

  readOutput(id: string): Uint8Array {
    return this.#inner.readOutput(id);
  }

  /** What seeding this session copied and skipped, when this opening seeded it; undefined otherwise. */
  get hydration(): HydratedSession['hydration'] {
    return this.#hydration;
  }

  /** A stored session forks through the store, which keeps its lease and parent: `createSession({ store, sessionId, fork: true })`. */
  fork(): Promise<RemoteSession> {
    return Promise.reject(
      new NotSupportedError('a stored session forks through its store: createSession({ store, sessionId, fork: true })'),
    );
  }

  /**
   * A stored session keeps no hydration baseline (a seeded one neither: its seed is its first head), so this
   * rejects like any session without sources; use `exportTo`.
   */
  writeBack(options?: Parameters<HydratedSession['writeBack']>[0]): ReturnType<HydratedSession['writeBack']> {
    return this.#inner.writeBack(options);
  }

  async runTool<Schema extends z.ZodType, T>(
    tool: ToolDefinition<Schema, T>,
    rawParams: unknown,
    options?: RunToolOptions,
  ): Promise<ToolCallResult<T>> {
    const result = await this.#inner.runTool(tool, rawParams, options);
    if (result.success && !this.#readOnly) await this.publish();
    return result;
  }

  async merge(
    other: Parameters<HydratedSession['merge']>[0],
    options?: Parameters<HydratedSession['merge']>[1],
  ): ReturnType<HydratedSession['merge']> {
    const result = await this.#inner.merge(other, options);
    if (result.applied && !this.#readOnly) await this.publish();
    return result;
  }

  /** Runs a program (see `Session.exec`); what it changed is published as after a successful call. */
  async exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult> {
    const result = await this.#inner.exec(command, options);
    if (!this.#readOnly && callScope.getStore() === undefined) await this.publish();
    return result;
  }

  rollbackTo(snapshot: WorkspaceSnapshot): Promise<void> {
    return this.#inner.rollbackTo(snapshot);
  }

  async reset(): Promise<void> {
    await this.#inner.reset();
  }

  publish(): Promise<number> {
    return this.#publish(false);
  }

  /** @internal The seeded first head, published as where the session began (`sessions diff` compares with it). */
  publishSeed(): Promise<number> {
    return this.#publish(true);
  }

  #publish(base: boolean): Promise<number> {
    if (this.#readOnly) return Promise.reject(new ConflictError(`session '${this.id}' was opened read-only; it cannot publish`));
    // One publish at a time: a second call waits for the first and then publishes what is left.
    const run = async (): Promise<number> => {
      if (this.#leaseLost) throw new ConflictError(`session '${this.id}' lost its lease to another owner; nothing was published`);
      let captured: Awaited<ReturnType<BlobTreeDriver['capture']>> | undefined;
      let uploaded: Map<string, Uint8Array> = new Map();
      const version = await this.#store.publish({
        sessionId: this.id,
        owner: this.#owner,
        expectedVersion: this.#head.version,
        leaseMs: this.#leaseMs,
        ...(base ? { base: true } : {}),
        upload: async () => {
          // The history first: recording pending changes may take a snapshot, which the capture then includes.
          const state = await historyState(this.#inner);
          captured = await this.#driver.capture();
          uploaded = this.#driver.unpublished();
          if (state.history.turns.length === 0 && state.redo.length === 0) return { root: captured.root, blobs: uploaded };
          const history = await storeHistory(this.#store.blobs, state, this.#historyBlobs);
          for (const [hash, bytes] of history.blobs) uploaded.set(hash, bytes);
          return { root: captured.root, blobs: uploaded, history: history.hash };
        },
      });
      this.#driver.published(uploaded.keys());
      this.#head.version = version;
      this.#head.root = captured?.root;
      return version;
    };
    const next = (this.#publishing ?? Promise.resolve(0)).catch(() => 0).then(run);
    this.#publishing = next;
    return next;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.#renewal !== undefined) clearInterval(this.#renewal);
    try {
      if (!this.#readOnly && !this.#leaseLost) {
        await this.publish();
        await this.#store.release(this.id, this.#owner);
      }
    } finally {
      await this.#inner.dispose();
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  /** Lets go of an open that failed: nothing published, the lease left to the caller to release. */
  async abandon(): Promise<void> {
    this.#disposed = true;
    if (this.#renewal !== undefined) clearInterval(this.#renewal);
    await this.#inner.dispose();
  }

  async #renew(): Promise<void> {
    try {
      if (!(await this.#store.renew(this.id, this.#owner, this.#leaseMs))) this.#leaseLost = true;
    } catch {
      // A failed renewal is retried on the next tick; the lease fences a stale owner either way.
    }
  }
}
