import { unaudited } from '../governance/audit.js';
import { releaseSnapshots } from '../workspace/snapshot-queue.js';
import type { DiffEntry, SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import type { AuditTrail } from './audit-trail.js';
import { NothingToRedoError, NothingToUndoError } from './errors.js';
import { summarizeMethod } from './summary.js';
import {
  contentsOf,
  copyContents,
  copyOperation,
  stateOf,
  type HistoryState,
  type LogContents,
  type LoggedOperation,
  type Turn,
} from './log-state.js';
import type { HistoryActor, HistoryOperation, HistoryTurn, OperationKind, SessionHistory } from './types.js';

export type { HistoryState, LoggedOperation } from './log-state.js';

/** How much history a log keeps (the session's `retention`). */
export interface HistoryRetention {
  /** Operations kept, newest. */
  maxHistory: number;
  /** Snapshots the log took kept, newest; older ones are released (undoing to them is then `SnapshotRestoreError`). */
  maxSnapshots: number;
}

/** What an operation is, as the session reports it. */
export interface OperationInput {
  actor: HistoryActor;
  kind: OperationKind;
  tool: string;
  summary: string;
  startedAt: string;
  outcome?: 'ok' | 'failed';
  code?: string;
  callId?: string;
  target?: string;
}

/** Orchestrator changes made outside calls since the last operation: recorded as one when the next one starts. */
interface Pending {
  startedAt: string;
  methods: string[];
  count: number;
  /** Only restores: the operation is a `restore` (blame then gives back lines their first writers). */
  restores: boolean;
}

/** Pending changes named in a summary; the rest are counted. */
const NAMED_CHANGES = 8;

/**
 * A session's history of operations grouped in turns, and the snapshots that make it navigable: the
 * workspace before the first operation (`head`) and after each one that changed something, so that every
 * operation's before and after are snapshots, undo restores a turn's before and redo the state undo left.
 *
 * The session calls it from inside its queue (one thing at a time). Changes made through the session's
 * workspace outside calls are noted as they happen and recorded as one `change` operation when the next
 * operation, turn, undo or history read comes. A snapshot or diff that fails leaves the operation without
 * ids and the head unknown (the next change takes a new one): history never fails a call.
 */
export class HistoryLog {
  readonly #sessionId: string;
  readonly #retention: HistoryRetention;
  #turns: Turn[] = [];
  /** The turn `openTurn` opened, until the next one, an undo or a redo. */
  #open: Turn | undefined;
  #head: WorkspaceSnapshot | undefined;
  #taking: Promise<void> | undefined;
  #pending: Pending | undefined;
  /** Undone turns that `redo` can bring back, newest last, each with the state its undo left behind. */
  #redo: { turn: Turn; state: WorkspaceSnapshot }[] = [];
  /** Snapshots this log took, oldest first: what retention releases. */
  #held: WorkspaceSnapshot[] = [];
  #known = new Map<string, WorkspaceSnapshot>();
  #operations = 0;
  #turnCount = 0;
  #dropped = 0;
  /** Where each operation's audit events come from, when the session's workspace keeps them (a stored session's). */
  auditTrail: AuditTrail | undefined;

  constructor(sessionId: string, retention: HistoryRetention) {
    this.#sessionId = sessionId;
    this.#retention = retention;
  }

  /** A log that goes on from this one's state (a fork's): the same turns and snapshots, independent afterwards. */
  copy(sessionId: string): HistoryLog {
    const log = new HistoryLog(sessionId, this.#retention);
    log.#adopt(copyContents(this.#contents()));
    return log;
  }

  /** The log's state as data (see `HistoryState`); `from` makes a log that goes on from it. */
  state(): HistoryState {
    return stateOf(this.#contents(), this.view());
  }

  /**
   * A log that goes on from a state `state()` gave (read back from where a stored session keeps it).
   * `head`: whether the workspace is still in the state's head (else the next change takes a new one).
   */
  static from(sessionId: string, retention: HistoryRetention, state: HistoryState, options: { head: boolean }): HistoryLog {
    const log = new HistoryLog(sessionId, retention);
    log.#adopt(contentsOf(state, options.head));
    return log;
  }

  #contents(): LogContents {
    return {
      turns: this.#turns,
      open: this.#open,
      head: this.#head,
      redo: this.#redo,
      held: this.#held,
      known: this.#known,
      operations: this.#operations,
      turnCount: this.#turnCount,
      dropped: this.#dropped,
    };
  }

  #adopt(contents: LogContents): void {
    this.#turns = contents.turns;
    this.#open = contents.open;
    this.#head = contents.head;
    this.#redo = contents.redo;
    this.#held = contents.held;
    this.#known = contents.known;
    this.#operations = contents.operations;
    this.#turnCount = contents.turnCount;
    this.#dropped = contents.dropped;
  }

  /** A snapshot this history names (by id), if it still holds it. */
  snapshot(id: string): WorkspaceSnapshot | undefined {
    return this.#known.get(id);
  }

  /** Every operation kept, oldest first, with its snapshot records (what `blame` reads). */
  operations(): LoggedOperation[] {
    return this.#turns.flatMap((turn) => turn.entries);
  }

  /**
   * The newest operations whose snapshots are all still held (retention releases the oldest): what `blame`
   * can read. What came before them is, to blame, older than the history.
   */
  readable(): LoggedOperation[] {
    const all = this.operations();
    const held = (record: WorkspaceSnapshot | undefined): boolean => record === undefined || this.#known.get(record.id) === record;
    let start = all.length;
    while (start > 0 && held(all[start - 1]?.before) && held(all[start - 1]?.after)) start -= 1;
    return all.slice(start);
  }

  /** Records the workspace as it is now as the starting state, unless known (before the first change). */
  async ensureHead(workspace: SnapshotableWorkspace): Promise<void> {
    if (this.#head !== undefined) return;
    this.#taking ??= unaudited(workspace, () => workspace.snapshot({ tag: 'history' }))
      .then((record) => {
        this.#head = record;
        this.#hold(record);
      })
      .finally(() => {
        this.#taking = undefined;
      });
    await this.#taking;
  }

  /** A change made outside calls, through the session's workspace (see the class comment). */
  noteChange(method: string, args: readonly unknown[]): void {
    this.#pending ??= { startedAt: new Date().toISOString(), methods: [], count: 0, restores: true };
    this.#pending.count += 1;
    this.#pending.restores &&= method === 'restore';
    if (this.#pending.methods.length < NAMED_CHANGES) this.#pending.methods.push(summarizeMethod(method, args));
  }

  /** Records the changes noted since the last operation, as one. */
  async flush(workspace: SnapshotableWorkspace): Promise<void> {
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    const more = pending.count - pending.methods.length;
    await this.record(
      workspace,
      {
        actor: 'orchestrator',
        kind: pending.restores ? 'restore' : 'change',
        tool: pending.count === 1 ? (pending.methods[0]?.split(' ')[0] ?? 'change') : 'changes',
        summary: pending.methods.join('; ') + (more > 0 ? `; … ${more} more` : ''),
        startedAt: pending.startedAt,
      },
      { changing: true },
    );
  }

  /** Opens a turn: the operations after it belong to it until the next turn, undo or redo. */
  openTurn(label: string | undefined): string {
    // A turn in which nothing happened says nothing: it is replaced.
    if (this.#open !== undefined && this.#open.entries.length === 0) this.#turns.splice(this.#turns.indexOf(this.#open), 1);
    this.#open = this.#newTurn('turn', label);
    return this.#open.id;
  }

  /**
   * Records an operation that has just run. `changing`: it may have changed the workspace, so the state
   * after it is snapshotted and compared with the head (a snapshot with no change is released at once).
   * `restored`: it made the workspace hold that snapshot (an undo, a redo, a restore), which is its after.
   */
  async record(
    workspace: SnapshotableWorkspace,
    input: OperationInput,
    options: { changing?: boolean; restored?: WorkspaceSnapshot } = {},
  ): Promise<HistoryOperation> {
    const before = this.#head;
    let after = before;
    let changed: DiffEntry[] = [];
    if (options.changing === true || options.restored !== undefined) {
      try {
        // The history's own bookkeeping: not an operation of any actor's, so not audited.
        const taken = options.restored ?? (await unaudited(workspace, () => workspace.snapshot({ tag: `after ${input.tool}` })));
        changed = before === undefined ? [] : await unaudited(workspace, () => workspace.diff(before, taken));
        if (options.restored !== undefined || changed.length > 0 || before === undefined) {
          after = taken;
          if (options.restored === undefined) this.#hold(taken);
        } else await releaseSnapshots(workspace, [taken]).catch(() => undefined);
      } catch {
        after = undefined;
      }
    }
    this.#head = after;
    const audit = this.auditTrail?.take(input.kind === 'call' ? input.callId : undefined);
    const operation: HistoryOperation = {
      id: `op-${++this.#operations}`,
      turnId: '',
      actor: input.actor,
      kind: input.kind,
      tool: input.tool,
      summary: input.summary,
      changed,
      ...(before === undefined ? {} : { before: before.id }),
      ...(after === undefined ? {} : { after: after.id }),
      startedAt: input.startedAt,
      finishedAt: new Date().toISOString(),
      outcome: input.outcome ?? 'ok',
      ...(input.code === undefined ? {} : { code: input.code }),
      ...(input.callId === undefined ? {} : { callId: input.callId }),
      ...(input.target === undefined ? {} : { target: input.target }),
      ...(audit === undefined ? {} : { audit: audit.audit }),
      ...(audit === undefined || audit.omitted === 0 ? {} : { auditOmitted: audit.omitted }),
    };
    const turn = this.#turnFor(input.kind, input.startedAt);
    operation.turnId = turn.id;
    turn.entries.push({ operation, before, after });
    // A new change after an undo: what was undone can no longer be redone (it stays in the history, restorable by snapshot).
    if (changed.length > 0 && input.kind !== 'undo' && input.kind !== 'redo') this.#redo = [];
    await this.#retain(workspace);
    return operation;
  }

  /** Restores the state before the last turn that changed something and is not undone; recorded as an `undo` operation. */
  async undo(workspace: SnapshotableWorkspace, actor: HistoryActor): Promise<HistoryOperation> {
    const turn = this.#turns.findLast((candidate) => candidate.kind === 'turn' && !candidate.undone && changedSomething(candidate));
    if (turn === undefined) throw new NothingToUndoError(`session ${this.#sessionId} has no turn left to undo`);
    const target = turn.entries[0]?.before;
    const state = this.#head;
    if (target === undefined || state === undefined)
      throw new NothingToUndoError(`the state before ${turn.id} was not recorded, so it cannot be undone`);
    const startedAt = new Date().toISOString();
    await workspace.restore(target);
    turn.undone = true;
    this.#redo.push({ turn, state });
    return this.record(
      workspace,
      { actor, kind: 'undo', tool: 'undo', summary: `undo ${describeTurn(turn)}`, startedAt, target: turn.id },
      { restored: target },
    );
  }

  /** Brings back the state the latest undo left (what the undone turn had made); recorded as a `redo` operation. */
  async redo(workspace: SnapshotableWorkspace, actor: HistoryActor): Promise<HistoryOperation> {
    const item = this.#redo.at(-1);
    if (item === undefined) throw new NothingToRedoError(`session ${this.#sessionId} has nothing undone to redo`);
    const startedAt = new Date().toISOString();
    await workspace.restore(item.state);
    this.#redo.pop();
    item.turn.undone = false;
    return this.record(
      workspace,
      { actor, kind: 'redo', tool: 'redo', summary: `redo ${describeTurn(item.turn)}`, startedAt, target: item.turn.id },
      { restored: item.state },
    );
  }

  /** The history as JSON (copies: changing them changes nothing here). */
  view(): SessionHistory {
    const turns: HistoryTurn[] = this.#turns.map((turn) => ({
      id: turn.id,
      ...(turn.label === undefined ? {} : { label: turn.label }),
      kind: turn.kind,
      startedAt: turn.startedAt,
      undone: turn.undone,
      operations: turn.entries.map(({ operation }) => copyOperation(operation)),
    }));
    return {
      sessionId: this.#sessionId,
      turns,
      canUndo: this.#turns.some((turn) => turn.kind === 'turn' && !turn.undone && changedSomething(turn)),
      canRedo: this.#redo.length > 0,
      dropped: this.#dropped,
    };
  }

  #newTurn(kind: Turn['kind'], label: string | undefined, startedAt = new Date().toISOString()): Turn {
    const turn: Turn = { id: `turn-${++this.#turnCount}`, kind, startedAt, undone: false, entries: [] };
    if (label !== undefined) turn.label = label;
    this.#turns.push(turn);
    return turn;
  }

  /** The open turn, or a new one: an undo or redo is a turn of its own and closes the open one. */
  #turnFor(kind: OperationKind, startedAt: string): Turn {
    if (kind === 'undo' || kind === 'redo') {
      this.#open = undefined;
      return this.#newTurn(kind, undefined, startedAt);
    }
    return this.#open ?? this.#newTurn('turn', undefined, startedAt);
  }

  #hold(record: WorkspaceSnapshot): void {
    this.#held.push(record);
    this.#known.set(record.id, record);
  }

  /** Drops the oldest operations beyond `maxHistory`, and releases the oldest snapshots beyond `maxSnapshots`. */
  async #retain(workspace: SnapshotableWorkspace): Promise<void> {
    const { maxHistory, maxSnapshots } = this.#retention;
    let excess = this.#turns.reduce((sum, turn) => sum + turn.entries.length, 0) - maxHistory;
    while (excess > 0 && this.#turns.length > 0) {
      const oldest = this.#turns[0] as Turn;
      const cut = Math.min(excess, oldest.entries.length);
      oldest.entries.splice(0, cut);
      excess -= cut;
      this.#dropped += cut;
      if (oldest.entries.length === 0 && oldest !== this.#open) this.#turns.shift();
      else if (oldest.entries.length === 0) break;
    }
    if (this.#held.length <= maxSnapshots) return;
    // Never the head, nor a state redo needs.
    const keep = new Set([this.#head, ...this.#redo.map((item) => item.state)]);
    const released: WorkspaceSnapshot[] = [];
    for (const record of this.#held) {
      if (this.#held.length - released.length <= maxSnapshots) break;
      if (!keep.has(record)) released.push(record);
    }
    const gone = new Set(released);
    this.#held = this.#held.filter((record) => !gone.has(record));
    for (const record of released) this.#known.delete(record.id);
    await releaseSnapshots(workspace, released).catch(() => undefined);
  }
}

function changedSomething(turn: Turn): boolean {
  return turn.entries.some(({ operation }) => operation.changed.length > 0);
}

function describeTurn(turn: Turn): string {
  return turn.label === undefined ? turn.id : `${turn.id} (${turn.label})`;
}
