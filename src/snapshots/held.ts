import { randomUUID } from 'node:crypto';
import { SnapshotRestoreError } from '../workspace/errors.js';
import { isoNow, nextSnapshotId } from './stamp.js';
import type { SnapshotOptions, WorkspaceSnapshot } from '../workspace/types.js';

/**
 * Snapshots held in memory by the instance that took them (the memory and overlay backends: a snapshot is
 * a reference to an immutable root). Refs name the instance, so a record taken elsewhere never resolves here.
 */
export class HeldSnapshots<T> {
  readonly #backend: string;
  readonly #instanceId = randomUUID();
  readonly #held = new Map<string, { readonly id: string; readonly value: T }>();
  #count = 0;

  constructor(backend: string) {
    this.#backend = backend;
  }

  /** A new record holding `value`. */
  take(value: T, options: SnapshotOptions): WorkspaceSnapshot {
    this.#count += 1;
    const ref = `${this.#backend}:${this.#instanceId}:${this.#count}`;
    const id = nextSnapshotId();
    this.#held.set(ref, { id, value });
    const record: WorkspaceSnapshot = { id, backend: this.#backend, ref, createdAt: isoNow(), root: '/' };
    if (options.tag !== undefined) record.tag = options.tag;
    return record;
  }

  /** What `record` holds; `SnapshotRestoreError` for a record this instance did not take. */
  get(record: WorkspaceSnapshot): T {
    if (record.backend !== this.#backend)
      throw new SnapshotRestoreError(`snapshot ${record.id} belongs to a ${record.backend} workspace, not this ${this.#backend} workspace`);
    const held = this.#held.get(record.ref);
    if (held === undefined || held.id !== record.id) {
      const why = this.#released(record.ref)
        ? 'it was released (a session keeps only its newest snapshots: `retention.maxSnapshots`), or the workspace was disposed'
        : 'it was not taken by this workspace';
      throw new SnapshotRestoreError(`snapshot ${record.id} cannot be restored: ${why}`);
    }
    return held.value;
  }

  /** Forgets these records (what they held becomes garbage unless something else holds it); others are ignored. */
  release(records: readonly WorkspaceSnapshot[]): void {
    for (const record of records) {
      const held = this.#held.get(record.ref);
      if (held !== undefined && held.id === record.id) this.#held.delete(record.ref);
    }
  }

  /** Whether `ref` names a record this instance took and no longer holds (told from the ref alone: nothing is kept per release). */
  #released(ref: string): boolean {
    const prefix = `${this.#backend}:${this.#instanceId}:`;
    if (!ref.startsWith(prefix)) return false;
    const count = Number(ref.slice(prefix.length));
    return Number.isInteger(count) && count >= 1 && count <= this.#count;
  }

  /** Also holds every record `parent` holds now (a fork's history); later records of either stay apart. */
  inherit(parent: HeldSnapshots<T>): void {
    for (const [ref, held] of parent.#held) this.#held.set(ref, held);
  }

  /** Forgets every record: none restores afterwards. */
  clear(): void {
    this.#held.clear();
  }
}
