import { isUtf8 } from 'node:buffer';
import { blameFile } from '../history/blame.js';
import { splitLines } from '../history/line-diff.js';
import type { LoggedOperation } from '../history/log.js';
import type { BlameResult, HistoryOperation, SessionHistory } from '../history/types.js';
import { createSession } from '../session/index.js';
import { loadHistory, rootOf } from '../session/stored-history.js';
import { newLeaseOwner } from '../store/lease-owner.js';
import type { SessionInfo, SessionStore } from '../store/session-store.js';
import { storeDriver } from '../store/store-driver.js';
import { createWorkspace, type ManagedWorkspace } from '../workspace/create-workspace.js';
import { ConflictError, FileNotFoundError, InvalidArgumentError, WorkspaceError } from '../workspace/errors.js';
import type { RestorePreview, RestoreReceipt, WorkspaceSnapshot } from '../workspace/types.js';
import { sideBySide, type DiffRow } from './inspect-diff.js';
import { StoredChange } from './stored-change.js';

/** A session as the page lists it. */
export interface SessionSummary {
  name: string;
  version: number;
  updatedAt: string;
  /** Another process (a running `sessionfs mcp --session`) holds its lease. */
  open: boolean;
  parent: string | null;
}

/** One session as the page shows it: its head and its history (`null`: none was published with the head). */
export interface SessionView extends SessionSummary {
  history: SessionHistory | null;
}

/** One changed file of an operation, side by side. */
export interface FileDiff {
  path: string;
  status: string;
  /** Not shown line by line: binary, or too large. */
  note?: string;
  rows: DiffRow[];
}

/** A session or an operation the page names that the store does not hold (the page answers 404). */
export class UnknownItemError extends WorkspaceError {
  constructor(message: string) {
    super('ENOENT', message);
  }
}

/** Files larger than this are not diffed line by line. */
const MAX_DIFF_BYTES = 1 << 20;
/** How long a lease the inspector takes for an action (released as soon as it is done). */
const LEASE_MS = 30_000;

/**
 * What the inspector's page asks of a store: read-only views (sessions, histories, diffs, blame, patches)
 * read heads and blobs and take no lease, so they work while a server holds the session; a restore takes
 * the session's lease (refused while another process holds it); a fork makes a new session from a state
 * of the history and needs no lease on the original.
 */
export class StoreInspector {
  readonly #store: SessionStore;
  /** Read-only workspaces over roots the page looked at, newest last (a few kept: diffs and blame reuse them). */
  readonly #trees = new Map<string, ManagedWorkspace>();

  constructor(store: SessionStore) {
    this.#store = store;
  }

  async sessions(): Promise<SessionSummary[]> {
    const rows: SessionSummary[] = [];
    for (const head of await this.#store.listSessions()) {
      const info = await this.#store.describeSession(head.sessionId);
      if (info !== undefined) rows.push(summary(info));
    }
    return rows;
  }

  async session(name: string): Promise<SessionView> {
    const { info, history } = await this.#read(name);
    return { ...summary(info), history: history?.history ?? null };
  }

  /** The files an operation changed, each side by side (before and after it). */
  async diff(name: string, operationId: string): Promise<{ operation: HistoryOperation; files: FileDiff[] }> {
    const { operation, before, after } = await this.#operation(name, operationId);
    const files: FileDiff[] = [];
    for (const entry of operation.changed) {
      const left = entry.status === 'added' ? undefined : await this.#bytes(before, entry.path);
      const right = entry.status === 'deleted' ? undefined : await this.#bytes(after, entry.path);
      files.push({ path: entry.path, status: entry.status, ...textDiff(left, right) });
    }
    return { operation, files };
  }

  /** For each line of `path` in the session's head, the operation that last changed it. */
  async blame(name: string, path: string): Promise<BlameResult> {
    const { info, history } = await this.#read(name);
    if (info.root === undefined) throw new FileNotFoundError(path);
    const operations: LoggedOperation[] = (history?.history.turns ?? []).flatMap((turn) =>
      turn.operations.map((operation) => ({
        operation,
        before: history?.record(operation.before),
        after: history?.record(operation.after),
      })),
    );
    // Only the newest operations whose states are all known can be read (as the session's own blame does).
    let start = operations.length;
    while (start > 0 && known(operations[start - 1])) start -= 1;
    return blameFile(this.#tree(info.root), operations.slice(start), path);
  }

  /** The git patch of an operation (before → after), or of the whole session (where it began → its head). */
  async patch(name: string, operationId?: string): Promise<string> {
    if (operationId === undefined) {
      const { info } = await this.#read(name);
      return new StoredChange(this.#store.blobs, info).patch();
    }
    const { before, after } = await this.#operation(name, operationId);
    return new StoredChange(this.#store.blobs, { base: before, root: after }).patch();
  }

  /** What restoring the session to a state of its history would create, modify and delete (nothing changes). */
  async restorePreview(name: string, snapshotId: string): Promise<RestorePreview> {
    const { info, record } = await this.#state(name, snapshotId);
    // A writable workspace over the head, never published: a dry run on a read-only one would block everything.
    const workspace = createWorkspace(storeDriver({ blobs: this.#store.blobs, ...(info.root === undefined ? {} : { root: info.root }) }));
    try {
      const { preview } = await workspace.restore(record, { dryRun: true });
      return preview ?? { created: [], modified: [], deleted: [], blocked: [] };
    } finally {
      await workspace.dispose();
    }
  }

  /**
   * Restores the session to a state of its history, as a `restore` operation of its history, published as
   * a new head. Takes the session's lease: while another process holds it, `ConflictError`, nothing done.
   */
  async restore(name: string, snapshotId: string): Promise<{ receipt: RestoreReceipt | undefined; version: number }> {
    const { record } = await this.#state(name, snapshotId);
    const session = await this.#open(name);
    let receipt: RestoreReceipt | undefined;
    try {
      await session.turn('inspector: restore');
      ({ receipt } = await session.filesystem.restore(record));
    } finally {
      await session.dispose(); // publishes (with the history) and lets go of the lease
    }
    return { receipt, version: session.version };
  }

  /**
   * A new session `to`, forked from `name` at a state of its history: the parent's history goes on in it
   * with a `restore` to that state. Needs no lease on `name`; a `to` that exists is `ConflictError`.
   */
  async fork(name: string, snapshotId: string, to: string): Promise<{ name: string; version: number }> {
    const { info, history, record } = await this.#state(name, snapshotId);
    if ((await this.#store.head(to)) !== undefined) throw new ConflictError(`a session named ${JSON.stringify(to)} already exists`);
    const owner = newLeaseOwner();
    const head = await this.#store.acquire(to, owner, LEASE_MS, name);
    try {
      // The child starts with its parent's head and history; the restore below is recorded after them.
      const root = head.root ?? info.root;
      if (root !== undefined && history !== undefined)
        await this.#store.publish({
          sessionId: to,
          owner,
          expectedVersion: head.version,
          leaseMs: LEASE_MS,
          upload: async () => ({ root, blobs: new Map(), history: history.hash }),
        });
    } finally {
      await this.#store.release(to, owner);
    }
    const session = await this.#open(to);
    try {
      await session.turn(`inspector: fork of ${name}`);
      await session.filesystem.restore(record);
    } finally {
      await session.dispose();
    }
    return { name: to, version: session.version };
  }

  async close(): Promise<void> {
    for (const workspace of this.#trees.values()) await workspace.dispose().catch(() => undefined);
    this.#trees.clear();
  }

  async #read(name: string) {
    const info = await this.#store.describeSession(name);
    if (info === undefined) throw new UnknownItemError(`there is no session named ${JSON.stringify(name)}`);
    if (info.history === undefined) return { info, history: undefined };
    const state = await loadHistory(this.#store.blobs, info.history);
    const hash = info.history;
    const record = (id: string | undefined): WorkspaceSnapshot | undefined => (id === undefined ? undefined : state.snapshots[id]);
    return { info, history: { history: state.history, snapshots: state.snapshots, record, hash } };
  }

  async #operation(name: string, operationId: string) {
    const { history } = await this.#read(name);
    const operation = history?.history.turns.flatMap((turn) => turn.operations).find((candidate) => candidate.id === operationId);
    if (operation === undefined)
      throw new UnknownItemError(`session ${name} has no operation ${JSON.stringify(operationId)} in its history`);
    const before = rootIn(history?.record(operation.before));
    const after = rootIn(history?.record(operation.after));
    return { operation, before, after };
  }

  /** A state of the session's history, by snapshot id. */
  async #state(name: string, snapshotId: string) {
    const { info, history } = await this.#read(name);
    const record = history?.record(snapshotId);
    if (record === undefined || rootOf(record) === undefined)
      throw new InvalidArgumentError(`snapshot ${snapshotId} is not a state of session ${name}'s history`);
    return { info, history, record };
  }

  async #open(name: string) {
    try {
      return await createSession({ store: this.#store, sessionId: name, leaseMs: LEASE_MS });
    } catch (error) {
      if (error instanceof ConflictError)
        throw new ConflictError(
          `session ${name} is open in another process (a running sessionfs mcp --session ${name}): a restore needs its lease. Stop that server first, or fork this state into a new session`,
        );
      throw error;
    }
  }

  async #bytes(root: string | undefined, path: string): Promise<Uint8Array | undefined> {
    if (root === undefined) return undefined;
    const tree = this.#tree(root);
    const stat = await tree.stat(path).catch(() => undefined);
    if (stat === undefined || !stat.isFile) return undefined;
    if (stat.sizeBytes > MAX_DIFF_BYTES) return new Uint8Array(MAX_DIFF_BYTES + 1);
    return (await tree.readBytes(path)).content;
  }

  #tree(root: string): ManagedWorkspace {
    let tree = this.#trees.get(root);
    if (tree !== undefined) {
      this.#trees.delete(root);
      this.#trees.set(root, tree);
      return tree;
    }
    tree = createWorkspace(storeDriver({ blobs: this.#store.blobs, root }), { readOnly: true });
    this.#trees.set(root, tree);
    const oldest = this.#trees.keys().next().value;
    if (this.#trees.size > 16 && oldest !== undefined) {
      void this.#trees.get(oldest)?.dispose();
      this.#trees.delete(oldest);
    }
    return tree;
  }
}

function summary(info: SessionInfo): SessionSummary {
  return {
    name: info.sessionId,
    version: info.version,
    updatedAt: info.updatedAt.toISOString(),
    open: info.leaseUntil !== undefined,
    parent: info.parentId ?? null,
  };
}

function rootIn(record: WorkspaceSnapshot | undefined): string | undefined {
  return record === undefined ? undefined : rootOf(record);
}

function known(entry: LoggedOperation | undefined): boolean {
  const { operation, before, after } = entry ?? {};
  return (
    operation !== undefined &&
    (operation.before === undefined || before !== undefined) &&
    (operation.after === undefined || after !== undefined)
  );
}

const UTF8 = new TextDecoder();

function textDiff(left: Uint8Array | undefined, right: Uint8Array | undefined): Pick<FileDiff, 'rows' | 'note'> {
  if ((left?.byteLength ?? 0) > MAX_DIFF_BYTES || (right?.byteLength ?? 0) > MAX_DIFF_BYTES) return { rows: [], note: 'too large to show' };
  if ((left !== undefined && !isUtf8(left)) || (right !== undefined && !isUtf8(right))) return { rows: [], note: 'binary' };
  const before = left === undefined ? [] : splitLines(UTF8.decode(left));
  const after = right === undefined ? [] : splitLines(UTF8.decode(right));
  return { rows: sideBySide(before, after) };
}
