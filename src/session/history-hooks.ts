import type { AuditTrail } from '../history/audit-trail.js';
import { blameFile } from '../history/blame.js';
import { HistoryLog, type HistoryRetention, type HistoryState, type OperationInput } from '../history/log.js';
import {
  HISTORY_ACTORS,
  type BlameResult,
  type HistoryActionOptions,
  type HistoryActor,
  type HistoryOperation,
  type SessionHistory,
} from '../history/types.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { protocolMethods } from '../workspace/protocol-methods.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { READ_METHODS } from './call-view.js';
import type { OutsideHooks } from './queue.js';
import type { ForkOptions, HydratedSession } from './types.js';

/**
 * A session's history (docs/history.md) as the session drives it: the log of its operations in turns, and
 * where each operation's audit events come from. The session runs each of these in its queue, in order; this
 * holds what to do, the session when.
 */
export class HistoryHooks {
  readonly #sessionId: string;
  readonly #retention: HistoryRetention;
  #log: HistoryLog;
  /** Where the history takes each operation's audit events from, when it keeps them (see `recordAuditInHistory`). */
  #auditTrail: AuditTrail | undefined;

  constructor(sessionId: string, retention: HistoryRetention, log = new HistoryLog(sessionId, retention)) {
    this.#sessionId = sessionId;
    this.#retention = retention;
    this.#log = log;
  }

  /** Starts again from no history (a reset), still keeping audit events when it did. */
  restart(): void {
    this.#log = new HistoryLog(this.#sessionId, this.#retention);
    this.#log.auditTrail = this.#auditTrail;
  }

  /** Goes on with a history `state()` gave; `head`: the workspace is in its head state. */
  resume(state: HistoryState, head: boolean): void {
    this.#log = HistoryLog.from(this.#sessionId, this.#retention, state, { head });
    this.#log.auditTrail = this.#auditTrail;
  }

  /** Keeps with each operation the audit events it caused, from `trail`. */
  keepAudit(trail: AuditTrail): void {
    this.#auditTrail = trail;
    this.#log.auditTrail = trail;
  }

  /** Records what changed since the last operation (outside changes) as an operation of its own. */
  flush(workspace: SnapshotableWorkspace): Promise<void> {
    return this.#log.flush(workspace);
  }

  /** Takes the state before the first change as the history's start, once the workspace may change. */
  ensureHead(workspace: SnapshotableWorkspace): Promise<void> {
    return this.#log.ensureHead(workspace);
  }

  record(workspace: SnapshotableWorkspace, input: OperationInput, options: { changing: boolean }): Promise<HistoryOperation> {
    return this.#log.record(workspace, input, options);
  }

  /** A snapshot the history took or knows, by id. */
  snapshot(id: string): WorkspaceSnapshot | undefined {
    return this.#log.snapshot(id);
  }

  async state(workspace: SnapshotableWorkspace): Promise<HistoryState> {
    await this.#log.flush(workspace);
    return this.#log.state();
  }

  async view(workspace: SnapshotableWorkspace): Promise<SessionHistory> {
    await this.#log.flush(workspace);
    return this.#log.view();
  }

  async turn(workspace: SnapshotableWorkspace, label: string | undefined): Promise<string> {
    await this.#log.flush(workspace);
    return this.#log.openTurn(label);
  }

  undo(workspace: SnapshotableWorkspace, options: HistoryActionOptions | undefined, ready: () => Promise<void>): Promise<HistoryOperation> {
    return this.#step('undo', workspace, options, ready);
  }

  redo(workspace: SnapshotableWorkspace, options: HistoryActionOptions | undefined, ready: () => Promise<void>): Promise<HistoryOperation> {
    return this.#step('redo', workspace, options, ready);
  }

  async #step(
    direction: 'undo' | 'redo',
    workspace: SnapshotableWorkspace,
    options: HistoryActionOptions | undefined,
    ready: () => Promise<void>,
  ): Promise<HistoryOperation> {
    const actor = actorOf(options, 'orchestrator');
    await ready();
    await this.#log.flush(workspace);
    return this.#log[direction](workspace, actor);
  }

  async blame(workspace: SnapshotableWorkspace, path: string): Promise<BlameResult> {
    await this.#log.flush(workspace);
    return blameFile(workspace, this.#log.readable(), path);
  }

  /** Before a tool call: outside changes recorded, and (for a call that may change files) the history's start taken. */
  async beforeCall(workspace: SnapshotableWorkspace, changing: boolean, ready: () => Promise<void>): Promise<void> {
    await this.#log.flush(workspace);
    // A failure here is the call's to report.
    if (changing)
      await ready()
        .then(
          () => this.#log.ensureHead(workspace),
          () => undefined,
        )
        .catch(() => undefined);
  }

  /** `rollbackTo`: the restore to `snapshot`, recorded as the orchestrator's operation. */
  async rollbackTo(workspace: SnapshotableWorkspace, snapshot: WorkspaceSnapshot, summary: string): Promise<void> {
    await this.#log.flush(workspace);
    await this.#log.ensureHead(workspace).catch(() => undefined);
    const startedAt = new Date().toISOString();
    await workspace.restore(snapshot);
    await this.#log.record(
      workspace,
      { actor: 'orchestrator', kind: 'restore', tool: 'rollbackTo', summary, startedAt },
      { changing: true },
    );
  }

  /**
   * A fork's history: this one's, going on independently in `workspace` (the fork's, already holding this
   * history's files). With `point`, the fork is taken back to it, as an operation of its history.
   */
  async fork(
    workspace: SnapshotableWorkspace,
    ids: { parent: string; child: string },
    point: WorkspaceSnapshot | undefined,
  ): Promise<HistoryHooks> {
    const log = this.#log.copy(ids.child);
    if (point !== undefined) {
      const startedAt = new Date().toISOString();
      await log.ensureHead(workspace);
      await workspace.restore(point);
      await log.record(
        workspace,
        { actor: 'orchestrator', kind: 'restore', tool: 'fork', summary: `forked from ${ids.parent} at ${point.id}`, startedAt },
        { changing: true },
      );
    }
    return new HistoryHooks(ids.child, this.#retention, log);
  }

  /**
   * What `session.filesystem` does around an operation from outside a call on `workspace`: a change waits
   * until the workspace may change (the origin recorded its starting state, a given host root's baseline)
   * and the history took its start; once done, it is noted for the history's next operation. `records()`
   * says whether the history should see it at all (not from inside the session's own work, nor once the
   * session moved on to another workspace).
   */
  outsideHooks(workspace: SnapshotableWorkspace, ready: () => Promise<void>, records: () => boolean): OutsideHooks {
    const changes = (property: PropertyKey, args: readonly unknown[]): boolean => isChange(property, args) && records();
    return {
      before: (property, args) => {
        if (READ_METHODS.has(property)) return undefined;
        if (!changes(property, args)) return ready();
        return ready().then(() => this.#log.ensureHead(workspace).catch(() => undefined));
      },
      after: (property, args) => {
        if (changes(property, args)) this.#log.noteChange(String(property), args);
      },
    };
  }
}

/** How a stored session reads and resumes a session's history (see `historyState`, `resumeHistory`). */
const historyAccess = new WeakMap<object, { state(): Promise<HistoryState>; hooks(): HistoryHooks }>();

/** Lets `historyState`, `resumeHistory` and `recordAuditInHistory` reach `session`'s history. */
export function exposeHistory(session: HydratedSession, access: { state(): Promise<HistoryState>; hooks(): HistoryHooks }): void {
  historyAccess.set(session, access);
}

/** The session's history as data, with the snapshot records it names (what a stored session keeps with its head). */
export function historyState(session: HydratedSession): Promise<HistoryState> {
  const access = historyAccess.get(session);
  return access === undefined ? Promise.reject(new InvalidArgumentError('not a workspace session')) : access.state();
}

/**
 * Makes a session just opened go on with a history `historyState` gave; `head`: its workspace is in that
 * history's head state (else the next change takes the starting state anew).
 */
export function resumeHistory(session: HydratedSession, state: HistoryState, head: boolean): void {
  historyAccess.get(session)?.hooks().resume(state, head);
}

/** Makes each operation of a session's history keep the audit events it caused, from `trail` (a stored session's). */
export function recordAuditInHistory(session: HydratedSession, trail: AuditTrail): void {
  historyAccess.get(session)?.hooks().keepAudit(trail);
}

/** Protocol methods that change the workspace (a dry-run restore does not), and `exec`. */
const CHANGES: ReadonlySet<PropertyKey> = new Set([...protocolMethods((method) => method.kind === 'change'), 'exec']);

function isChange(property: PropertyKey, args: readonly unknown[]): boolean {
  if (!CHANGES.has(property)) return false;
  return !(property === 'restore' && (args[1] as { dryRun?: unknown } | null | undefined)?.dryRun === true);
}

/** The `actor` option, checked: one of `model`, `orchestrator`, `user`. */
export function actorOf(options: { actor?: unknown } | null | undefined, fallback: HistoryActor): HistoryActor {
  if (options !== undefined && options !== null && typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
  const actor = options?.actor;
  if (actor === undefined) return fallback;
  if (!HISTORY_ACTORS.includes(actor as HistoryActor))
    throw new InvalidArgumentError(`actor must be one of ${HISTORY_ACTORS.join(', ')}, got ${JSON.stringify(actor)}`);
  return actor as HistoryActor;
}

/** `fork`'s options, checked: nothing but `at` (a snapshot record or id). */
export function forkPoint(options: ForkOptions | undefined): WorkspaceSnapshot | string | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('fork options must be an object');
  const unknown = Object.keys(options).filter((key) => key !== 'at');
  if (unknown.length > 0) throw new InvalidArgumentError(`fork does not take ${unknown.join(', ')} (its option: at)`);
  const at = options.at;
  if (at === undefined || typeof at === 'string') return at;
  if (typeof at !== 'object' || at === null || typeof (at as { id?: unknown }).id !== 'string')
    throw new InvalidArgumentError('fork({ at }) takes a snapshot record or a snapshot id');
  return at;
}

/** A turn's label, checked: a string of at most 200 characters, or none. */
export function checkTurnLabel(label: string | undefined): void {
  if (label !== undefined && (typeof label !== 'string' || label.length > 200))
    throw new InvalidArgumentError('a turn label must be a string of at most 200 characters');
}
