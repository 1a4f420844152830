import { InvalidArgumentError, isWorkspaceError } from '../workspace/errors.js';
import { normalizePath, parentPath, type NormalizedPath } from '../workspace/paths.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';

/** A file larger than this is not copied into the journal: the call takes a full snapshot instead. */
const MAX_RECORDED_BYTES = 8 * 1024 * 1024;

/** How to put one path back: its former bytes, or nothing (the path, or the directory holding it, was created). */
type UndoEntry = { kind: 'file'; path: NormalizedPath; bytes: Uint8Array; executable: boolean } | { kind: 'absent'; path: NormalizedPath };

/** What the state before an operation needs: entries, or a full snapshot (anything the journal cannot describe). */
type Plan = UndoEntry | 'nothing' | 'snapshot';

/**
 * The rollback of one tool call as an undo journal instead of a snapshot taken before it (the session's
 * `rollback: 'journal'`): before each change the call makes, the former state of the path it touches is
 * recorded, and a failed call is undone by putting those states back, newest first. A write or `mkdir` is
 * recorded (a file's former bytes, or the top directory it creates); anything else that changes the
 * workspace (delete, rename, copy, restore, a command…) first takes a full snapshot, once per call, and the
 * rollback restores it before undoing what was recorded before it. Changes run one at a time, each after
 * its record, so the journal stays exact when a handler runs writes concurrently or through symlinked
 * names. A path that is a symlink, a directory, or a file over 8 MiB is not recorded: a snapshot is taken.
 */
export class UndoJournal {
  readonly #workspace: SnapshotableWorkspace;
  readonly #tag: string;
  readonly #entries: UndoEntry[] = [];
  #snapshot: WorkspaceSnapshot | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(workspace: SnapshotableWorkspace, tag: string) {
    this.#workspace = workspace;
    this.#tag = tag;
  }

  /** The snapshot the call had to take, if any (it is the session's snapshot before the call's first change it could not record). */
  get snapshot(): WorkspaceSnapshot | undefined {
    return this.#snapshot;
  }

  /** Runs a changing operation after recording what it may change; operations run one after another. */
  change<T>(method: PropertyKey, args: readonly unknown[], operation: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      await this.#record(method, args);
      return operation();
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Puts the workspace back as it was before the call: the snapshot, then the records, newest first. */
  async rollback(): Promise<void> {
    await this.#queue;
    if (this.#snapshot !== undefined) await this.#workspace.restore(this.#snapshot);
    for (const entry of this.#entries.splice(0).reverse()) {
      if (entry.kind === 'file') {
        // The bit is given only when set, so a backend without executable bits restores as before.
        const mode = entry.executable ? { executable: true } : {};
        await this.#workspace.writeBytes(entry.path, entry.bytes, { mode: 'overwrite', createParents: true, ...mode });
        if (!entry.executable && (await this.#workspace.stat(entry.path)).executable)
          await this.#workspace.setExecutable(entry.path, false);
      } else if (await this.#workspace.exists(entry.path)) await this.#workspace.delete(entry.path, { recursive: true });
    }
  }

  async #record(method: PropertyKey, args: readonly unknown[]): Promise<void> {
    if (this.#snapshot !== undefined || method === 'snapshot') return;
    const plan = method === 'write' || method === 'writeBytes' || method === 'mkdir' ? await this.#plan(method, args) : 'snapshot';
    if (plan === 'nothing') return;
    if (plan === 'snapshot') this.#snapshot = await this.#workspace.snapshot({ tag: this.#tag });
    else this.#entries.push(plan);
  }

  async #plan(method: 'write' | 'writeBytes' | 'mkdir', args: readonly unknown[]): Promise<Plan> {
    let path: NormalizedPath;
    try {
      path = normalizePath(args[0]);
    } catch {
      return 'nothing'; // the operation refuses the path before touching anything
    }
    if (path === '') return 'nothing';
    const found = await this.#stat(path);
    if (found === 'missing') {
      const top = await this.#topMissing(path);
      return top === 'snapshot' ? top : { kind: 'absent', path: top };
    }
    if (found === 'unknown' || found.isSymlink) return 'snapshot';
    if (method === 'mkdir') return found.isDirectory ? 'nothing' : 'snapshot';
    if (!found.isFile || found.sizeBytes > MAX_RECORDED_BYTES) return 'snapshot';
    const { content } = await this.#workspace.readBytes(path);
    return { kind: 'file', path, bytes: content, executable: found.executable };
  }

  /** The highest missing directory above `path` (or `path` itself): deleting it undoes what creating `path` made. */
  async #topMissing(path: NormalizedPath): Promise<NormalizedPath | 'snapshot'> {
    let top = path;
    for (let parent = parentPath(path); parent !== ''; parent = parentPath(parent)) {
      const found = await this.#stat(parent);
      if (found === 'missing') top = parent;
      // A dangling link (or a file) above: what a write there creates is not under `top`.
      else if (found === 'unknown' || !found.isDirectory) return 'snapshot';
      else break;
    }
    return top;
  }

  async #stat(path: NormalizedPath) {
    try {
      return await this.#workspace.stat(path);
    } catch (error) {
      if (isWorkspaceError(error) && error.code === 'ENOENT') return 'missing' as const;
      return 'unknown' as const;
    }
  }
}

/** A changing method that returns synchronously (a stream) cannot wait for its record: refused in journal mode. */
export function journalRefusal(toolName: string, method: PropertyKey): InvalidArgumentError {
  return new InvalidArgumentError(
    `${toolName} runs with rollback 'journal', which records each change before it runs: ${String(method)} cannot wait for that; use the promise-based methods`,
  );
}
