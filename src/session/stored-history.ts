import type { HistoryState } from '../history/log.js';
import type { HistoryTurn, SessionHistory } from '../history/types.js';
import { readHistory, writeHistory, type HistoryDocument, type HistoryPart } from '../store/history-blobs.js';
import type { BlobStore } from '../workspace/driver.js';
import { CorruptDataError } from '../workspace/errors.js';
import type { WorkspaceSnapshot } from '../workspace/types.js';

/** What a history part holds: one turn, and the snapshot records its operations name. */
interface TurnPart {
  turn: HistoryTurn;
  snapshots: Record<string, WorkspaceSnapshot>;
}

/** What the index holds besides the parts: the history's flags, its head and redo states, its counters. */
interface HistoryMeta extends Omit<HistoryState, 'history' | 'snapshots'> {
  sessionId: string;
  canUndo: boolean;
  canRedo: boolean;
  dropped: number;
  /** Records named by the head and redo and by no operation. */
  snapshots: Record<string, WorkspaceSnapshot>;
}

const REF = /^sha256:([0-9a-f]{64})$/;

/** The root manifest a stored session's snapshot record names (its `ref`), if it is one. */
export function rootOf(record: WorkspaceSnapshot): string | undefined {
  return REF.exec(record.ref)?.[1];
}

/**
 * Stores a session's history state with the store's blobs (one part per turn: a publish stores the turns
 * that changed) and returns the index's hash and the blobs stored anew (see `writeHistory`).
 */
export function storeHistory(
  blobs: BlobStore,
  state: HistoryState,
  stored?: Set<string>,
): Promise<{ hash: string; blobs: Map<string, Uint8Array> }> {
  const named = new Set<string>();
  const parts: HistoryPart[] = state.history.turns.map((turn) => {
    const snapshots: Record<string, WorkspaceSnapshot> = {};
    for (const operation of turn.operations)
      for (const id of [operation.before, operation.after]) {
        const record = id === undefined ? undefined : state.snapshots[id];
        if (record !== undefined && id !== undefined) {
          snapshots[id] = record;
          named.add(id);
        }
      }
    const part: TurnPart = { turn, snapshots };
    return { data: part, roots: rootsOf(snapshots) };
  });
  const rest: Record<string, WorkspaceSnapshot> = {};
  for (const [id, record] of Object.entries(state.snapshots)) if (!named.has(id)) rest[id] = record;
  const { history, snapshots: _all, ...kept } = state;
  const meta: HistoryMeta = {
    ...kept,
    sessionId: history.sessionId,
    canUndo: history.canUndo,
    canRedo: history.canRedo,
    dropped: history.dropped,
    snapshots: rest,
  };
  // The head's and redo's states are kept by gc as well: a part of their own.
  parts.push({ data: null, roots: rootsOf(rest) });
  return writeHistory(blobs, { meta, parts }, stored);
}

/** The history state an index blob names (what `storeHistory` stored). A blob that is not one is `CorruptDataError`. */
export async function loadHistory(blobs: BlobStore, hash: string): Promise<HistoryState> {
  return historyOf(await readHistory(blobs, hash));
}

function historyOf(document: HistoryDocument): HistoryState {
  const meta = document.meta as Partial<HistoryMeta> | null;
  if (meta === null || typeof meta !== 'object' || !Array.isArray(meta.redo) || typeof meta.operations !== 'number')
    throw new CorruptDataError('a stored history has no valid index');
  const snapshots: Record<string, WorkspaceSnapshot> = { ...(meta.snapshots ?? {}) };
  const turns: HistoryTurn[] = [];
  for (const part of document.parts) {
    if (part.data === null) continue;
    const { turn, snapshots: named } = (part.data ?? {}) as Partial<TurnPart>;
    if (turn === undefined || !Array.isArray(turn.operations)) throw new CorruptDataError('a stored history part holds no turn');
    turns.push(turn);
    Object.assign(snapshots, named);
  }
  const history: SessionHistory = {
    sessionId: String(meta.sessionId),
    turns,
    canUndo: meta.canUndo === true,
    canRedo: meta.canRedo === true,
    dropped: Number(meta.dropped ?? 0),
  };
  return {
    history,
    snapshots,
    ...(typeof meta.head === 'string' ? { head: meta.head } : {}),
    ...(typeof meta.open === 'string' ? { open: meta.open } : {}),
    redo: meta.redo,
    operations: meta.operations,
    turns: Number(meta.turns ?? turns.length),
  };
}

function rootsOf(snapshots: Record<string, WorkspaceSnapshot>): string[] {
  const roots = new Set<string>();
  for (const record of Object.values(snapshots)) {
    const root = rootOf(record);
    if (root !== undefined) roots.add(root);
  }
  return [...roots];
}
