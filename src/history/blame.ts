import { isUtf8 } from 'node:buffer';
import { InvalidContentError } from '../workspace/errors.js';
import { displayPath, normalizePath } from '../workspace/paths.js';
import type { SnapshotableWorkspace, SnapshotTree, WorkspaceSnapshot } from '../workspace/types.js';
import type { LoggedOperation } from './log.js';
import { matchIds } from './line-diff.js';
import { LineTable, type Lines } from './line-table.js';
import type { BlameLine, BlameResult } from './types.js';

/** Lines with, for each, the index of the operation that wrote it (-1: before the history kept). */
interface Attributed {
  lines: Lines;
  owners: Int32Array;
}

/** Operations that put back a state the history had: a line they bring back keeps the operation that first wrote it. */
const RESTORING = new Set(['restore', 'undo', 'redo']);

/**
 * For each line of the file at `path` now, the operation that last changed it, read from the snapshots
 * before and after each operation that changed the path:
 * - an edit keeps the owners of the lines it left (a line diff) and owns the lines it wrote;
 * - a file an operation created while deleting another with the same bytes is a rename: its lines keep
 *   the owners they had under the old name;
 * - a restore, undo or redo that brings the file back to bytes it had after an earlier operation gives it
 *   the owners it had then (the lines were written by that operation, not by the restore); otherwise the
 *   restore owns the lines it changed, as an edit would.
 * Lines older than the history kept have no operation.
 */
export async function blameFile(
  workspace: SnapshotableWorkspace,
  operations: readonly LoggedOperation[],
  pathInput: string,
): Promise<BlameResult> {
  const path = normalizePath(pathInput);
  const live = (await workspace.readBytes(path)).content;
  if (!isUtf8(live)) throw new InvalidContentError(displayPath(path), `${displayPath(path)} is not UTF-8 text: blame reads lines`);
  const table = new LineTable();
  const blamer = new Blamer(workspace, operations, table);
  const known = await blamer.at(path, operations.length);
  const lines = table.lines(live, known?.lines);
  const owners = known === undefined ? new Int32Array(lines.ids.length).fill(-1) : attribute(known, lines, -1);
  return {
    path: displayPath(path),
    lines: Array.from(lines.ids, (id, index) => {
      const line: BlameLine = { line: index + 1, text: table.text(id) };
      const owner = owners[index] as number;
      const operation = owner < 0 ? undefined : operations[owner]?.operation;
      if (operation !== undefined)
        Object.assign(line, { operationId: operation.id, turnId: operation.turnId, actor: operation.actor, tool: operation.tool });
      return line;
    }),
  };
}

/**
 * The owners of `lines` (read after `previous.lines`) when they replace `previous`: kept for the lines left,
 * `owner` for the others. The lines both start and end with keep theirs; the rest is a line diff.
 */
function attribute(previous: Attributed, lines: Lines, owner: number): Int32Array {
  const { head, tail } = lines;
  const count = lines.ids.length;
  const oldCount = previous.lines.ids.length;
  const owners = new Int32Array(count);
  owners.set(previous.owners.subarray(0, head));
  owners.set(previous.owners.subarray(oldCount - tail), count - tail);
  const matched = matchIds(previous.lines.ids.subarray(head, oldCount - tail), lines.ids.subarray(head, count - tail));
  for (let line = 0; line < matched.length; line += 1) {
    const index = matched[line] as number;
    owners[head + line] = index < 0 ? owner : (previous.owners[head + index] as number);
  }
  return owners;
}

class Blamer {
  readonly #workspace: SnapshotableWorkspace;
  readonly #operations: readonly LoggedOperation[];
  readonly #table: LineTable;
  /** Path → indexes of the operations that changed it, ascending. */
  readonly #changes = new Map<string, number[]>();
  readonly #trees = new Map<string, Promise<SnapshotTree>>();
  readonly #memo = new Map<string, Promise<Attributed | undefined>>();

  constructor(workspace: SnapshotableWorkspace, operations: readonly LoggedOperation[], table: LineTable) {
    this.#workspace = workspace;
    this.#operations = operations;
    this.#table = table;
    operations.forEach(({ operation }, index) => {
      for (const entry of operation.changed) {
        const list = this.#changes.get(entry.path);
        if (list === undefined) this.#changes.set(entry.path, [index]);
        else list.push(index);
      }
    });
  }

  /** The snapshot of state `k`: before the first operation (0), or after operation `k - 1`. */
  #state(k: number): WorkspaceSnapshot | undefined {
    if (k === 0) return this.#operations[0]?.before;
    const entry = this.#operations[k - 1];
    return entry?.after ?? entry?.before;
  }

  /** The bytes of the UTF-8 text at `path` in state `k`: undefined when absent (or unknown) or not UTF-8. */
  async #text(path: string, k: number): Promise<Buffer | undefined> {
    const record = this.#state(k);
    if (record === undefined) return undefined;
    let tree = this.#trees.get(record.id);
    if (tree === undefined) {
      tree = this.#workspace.snapshotTree(record);
      this.#trees.set(record.id, tree);
    }
    const entry = await (await tree).entry(path);
    if (entry === undefined || entry.kind === 'directory') return undefined;
    const bytes = await entry.bytes();
    return isUtf8(bytes) ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : undefined;
  }

  /** The lines of `path` in state `k`, attributed. */
  at(path: string, k: number): Promise<Attributed | undefined> {
    const key = `${k}\0${path}`;
    let found = this.#memo.get(key);
    if (found === undefined) {
      found = this.#compute(path, k);
      this.#memo.set(key, found);
    }
    return found;
  }

  async #compute(path: string, k: number): Promise<Attributed | undefined> {
    const changes = this.#changes.get(path) ?? [];
    const before = countBelow(changes, k);
    const last = changes[before - 1];
    if (last === undefined) {
      const text = await this.#text(path, 0);
      if (text === undefined) return undefined;
      const lines = this.#table.lines(text);
      return { lines, owners: new Int32Array(lines.ids.length).fill(-1) };
    }
    const text = await this.#text(path, last + 1);
    if (text === undefined) return undefined;
    const { operation } = this.#operations[last] as LoggedOperation;
    if (RESTORING.has(operation.kind)) {
      // Back to bytes an earlier state had: the lines are that state's.
      for (const state of [...changes.slice(0, before - 1).map((index) => index + 1), 0].sort((a, b) => b - a)) {
        if ((await this.#text(path, state))?.equals(text) === true) return this.at(path, state);
      }
    }
    const status = operation.changed.find((entry) => entry.path === path)?.status;
    const previous = status === 'added' ? await this.#renamedFrom(path, last, text) : await this.at(path, last);
    const lines = this.#table.lines(text, previous?.lines);
    if (previous === undefined) return { lines, owners: new Int32Array(lines.ids.length).fill(last) };
    return { lines, owners: attribute(previous, lines, last) };
  }

  /** The lines of the path operation `index` deleted while creating `path` with the same text (a rename), if any. */
  async #renamedFrom(path: string, index: number, text: Buffer): Promise<Attributed | undefined> {
    const { operation } = this.#operations[index] as LoggedOperation;
    const name = path.slice(path.lastIndexOf('/') + 1);
    const deleted = operation.changed
      .filter((entry) => entry.status === 'deleted')
      .map((entry) => entry.path)
      // The same name first: a moved directory moves each file under its own name.
      .sort((a, b) => Number(b.endsWith(`/${name}`) || b === name) - Number(a.endsWith(`/${name}`) || a === name));
    for (const source of deleted) {
      if ((await this.#text(source, index))?.equals(text) === true) return this.at(source, index);
    }
    return undefined;
  }
}

/** How many of `values` (ascending) are below `limit`. */
function countBelow(values: readonly number[], limit: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((values[mid] as number) < limit) low = mid + 1;
    else high = mid;
  }
  return low;
}
