import type { WorkspaceSnapshot } from '../workspace/types.js';
import type { HistoryOperation, HistoryTurn, SessionHistory } from './types.js';

/**
 * A log's state as data (JSON): what a stored session keeps with its head, so that a later opening of the
 * session (another process, after a restart) goes on with the same history, undo and redo.
 */
export interface HistoryState {
  /** The turns, as `history()` shows them. */
  history: SessionHistory;
  /** Every snapshot record the operations, the head and redo name, by id. */
  snapshots: Record<string, WorkspaceSnapshot>;
  /** The state the workspace was in after the last operation. */
  head?: string;
  /** The turn `turn()` opened and that is still open. */
  open?: string;
  /** What `redo` can bring back, oldest first: the undone turn and the state its undo left. */
  redo: { turn: string; state: string }[];
  /** How many operations and turns were ever numbered (the next ids go on from them). */
  operations: number;
  turns: number;
}

/** One operation with the snapshot records behind its ids. */
export interface LoggedOperation {
  readonly operation: HistoryOperation;
  readonly before: WorkspaceSnapshot | undefined;
  readonly after: WorkspaceSnapshot | undefined;
}

/** A turn as the log keeps it: its operations with their snapshot records. */
export interface Turn {
  id: string;
  label?: string;
  kind: HistoryTurn['kind'];
  startedAt: string;
  undone: boolean;
  entries: LoggedOperation[];
}

/**
 * What a log holds, as plain records: its turns, the turn open, the head, what redo can bring back, the
 * snapshots it holds and knows, and the counts its ids go on from. What `copy`, `state` and `from` move.
 */
export interface LogContents {
  turns: Turn[];
  open: Turn | undefined;
  head: WorkspaceSnapshot | undefined;
  redo: { turn: Turn; state: WorkspaceSnapshot }[];
  held: WorkspaceSnapshot[];
  known: Map<string, WorkspaceSnapshot>;
  operations: number;
  turnCount: number;
  dropped: number;
}

/** Contents that go on independently from `contents` (a fork's): the same turns and snapshots, no turn open. */
export function copyContents(contents: LogContents): LogContents {
  const turns = new Map(contents.turns.map((turn) => [turn, { ...turn, entries: [...turn.entries] }]));
  return {
    turns: [...turns.values()],
    open: undefined,
    head: contents.head,
    redo: contents.redo.map(({ turn, state }) => ({ turn: turns.get(turn) ?? turn, state })),
    held: [...contents.held],
    known: new Map(contents.known),
    operations: contents.operations,
    turnCount: contents.turnCount,
    dropped: contents.dropped,
  };
}

/** `contents` as data (see `HistoryState`); `history` is the log's `view()`. */
export function stateOf(contents: LogContents, history: SessionHistory): HistoryState {
  const snapshots: Record<string, WorkspaceSnapshot> = {};
  const keep = (record: WorkspaceSnapshot | undefined): void => {
    if (record !== undefined) snapshots[record.id] = { ...record };
  };
  for (const { before, after } of contents.turns.flatMap((turn) => turn.entries)) {
    keep(before);
    keep(after);
  }
  keep(contents.head);
  for (const { state } of contents.redo) keep(state);
  return {
    history,
    snapshots,
    ...(contents.head === undefined ? {} : { head: contents.head.id }),
    ...(contents.open === undefined ? {} : { open: contents.open.id }),
    redo: contents.redo.map(({ turn, state }) => ({ turn: turn.id, state: state.id })),
    operations: contents.operations,
    turns: contents.turnCount,
  };
}

/**
 * The contents a state `stateOf` gave stands for (read back from where a stored session keeps it). `head`:
 * whether the workspace is still in the state's head (else the head is unknown).
 */
export function contentsOf(state: HistoryState, head: boolean): LogContents {
  const records = new Map(Object.entries(state.snapshots).map(([id, record]) => [id, { ...record, id }]));
  const held = new Set<WorkspaceSnapshot>();
  const record = (id: string | undefined): WorkspaceSnapshot | undefined => {
    const found = id === undefined ? undefined : records.get(id);
    if (found !== undefined) held.add(found);
    return found;
  };
  const byId = new Map<string, Turn>();
  const turns: Turn[] = [];
  for (const turn of state.history.turns) {
    const entries = turn.operations.map((operation) => ({
      operation: copyOperation(operation),
      before: record(operation.before),
      after: record(operation.after),
    }));
    const copy: Turn = { id: turn.id, kind: turn.kind, startedAt: turn.startedAt, undone: turn.undone, entries };
    if (turn.label !== undefined) copy.label = turn.label;
    byId.set(turn.id, copy);
    turns.push(copy);
  }
  const open = state.open === undefined ? undefined : byId.get(state.open);
  const headRecord = head ? record(state.head) : undefined;
  const redo: LogContents['redo'] = [];
  for (const item of state.redo) {
    const turn = byId.get(item.turn);
    const stateRecord = record(item.state);
    if (turn !== undefined && stateRecord !== undefined) redo.push({ turn, state: stateRecord });
  }
  return {
    turns,
    open,
    head: headRecord,
    redo,
    held: [...held],
    known: new Map([...held].map((kept) => [kept.id, kept])),
    operations: state.operations,
    turnCount: state.turns,
    dropped: state.history.dropped,
  };
}

/** A copy of an operation that shares nothing with it. */
export function copyOperation(operation: HistoryOperation): HistoryOperation {
  const copy = { ...operation, changed: operation.changed.map((entry) => ({ ...entry })) };
  if (operation.audit !== undefined) copy.audit = operation.audit.map((event) => ({ ...event }));
  return copy;
}
