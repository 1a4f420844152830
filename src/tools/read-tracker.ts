import { createHash } from 'node:crypto';
import { unguardedWorkspace } from '../session/call-view.js';
import type { ToolContext, ToolResult } from '../session/types.js';
import { ConflictError } from '../workspace/errors.js';
import type { Workspace, WriteOptions, WriteResult } from '../workspace/types.js';
import { failure, type ToolFailure } from './failure.js';

/** A file as the model last saw it: enough to tell that it changed, and to say how. */
interface Seen {
  digest: string;
  sizeBytes: number;
  lines: number;
}

/**
 * What read-before-write and stale-write state is kept per: the session's current workspace (stable across
 * calls, new after `reset()`), behind the per-call view `context.filesystem` is.
 */
export function trackingKey(context: ToolContext): Workspace {
  return unguardedWorkspace(context.filesystem);
}

/**
 * Which files a model has seen, and their content then, per workspace object. The content digest is what
 * tells a stale write, not `stat().version` alone: it sees every change (by the orchestrator, a shell
 * command, another program on the host within one timestamp tick, another session) on every backend,
 * and a file whose bytes are what the model saw is not stale even when its version moved (a rollback
 * restores the bytes of a file a failed call had changed, with a new host version). The version closes
 * the gap between that check and the write instead: it is taken before the bytes are read and passed as
 * `ifVersion`, so a change landing between the check and the write is refused under the write's lock.
 */
export class ReadTracker {
  readonly #seen = new WeakMap<Workspace, Map<string, Seen>>();
  readonly readBeforeWrite: boolean;
  readonly staleWriteGuard: boolean;

  constructor(options: { readBeforeWrite: boolean; staleWriteGuard: boolean }) {
    this.readBeforeWrite = options.readBeforeWrite;
    this.staleWriteGuard = options.staleWriteGuard;
  }

  /** The model has seen `path` holding `bytes` (it read them, or its own write left them). */
  markSeen(workspace: Workspace, path: string, bytes: Uint8Array): void {
    this.#map(workspace).set(path, describe(bytes));
  }

  forget(workspace: Workspace, path: string): void {
    const map = this.#map(workspace);
    for (const known of [...map.keys()]) if (known === path || known.startsWith(`${path}/`) || path === '/') map.delete(known);
  }

  /**
   * After `move` (or `copy` with `keepSource`): what was at `to` is gone, so its state goes too, and `to`
   * holds what `from` held, seen or not. (Keeping `to`'s state let a read file be replaced by an unread one,
   * then overwritten without ever being read.)
   */
  move(workspace: Workspace, from: string, to: string, keepSource = false): void {
    const map = this.#map(workspace);
    const carried = [...map].filter(([known]) => known === from || known.startsWith(`${from}/`));
    this.forget(workspace, to);
    for (const [known, seen] of carried) {
      if (!keepSource) map.delete(known);
      map.set(to + known.slice(from.length), seen);
    }
  }

  has(workspace: Workspace, path: string): boolean {
    return this.#map(workspace).has(path);
  }

  /** A failed result when read-before-write is on and `path` (which exists) has not been read; otherwise undefined. */
  refuseUnread(workspace: Workspace, path: string, tool: string): ToolResult<ToolFailure> | undefined {
    if (!this.readBeforeWrite || this.has(workspace, path)) return undefined;
    return failure(
      'ETOOL',
      `${path} exists and has not been read in this session, so ${tool} may not change it yet (read-before-write policy). ` +
        'Read it with read_file first, then retry.',
      { path, reason: 'not_read' },
    );
  }

  /**
   * A failed result (`ECONFLICT`, reason `stale`) when the model saw `path` and it now holds something else:
   * someone changed it since, and a write would be based on content the model never saw.
   */
  refuseStale(workspace: Workspace, path: string, current: Uint8Array, tool: string): ToolResult<ToolFailure> | undefined {
    if (!this.staleWriteGuard) return undefined;
    const seen = this.#map(workspace).get(path);
    if (seen === undefined) return undefined;
    const now = describe(current);
    if (now.digest === seen.digest) return undefined;
    const changes: string[] = [];
    if (now.sizeBytes !== seen.sizeBytes) changes.push(`size ${seen.sizeBytes} → ${now.sizeBytes} bytes`);
    if (now.lines !== seen.lines) changes.push(`lines ${seen.lines} → ${now.lines}`);
    const what = changes.length === 0 ? 'its content changed (same size and line count)' : changes.join(', ');
    return staleFailure(path, what, tool);
  }

  /**
   * The `ifVersion` for a write that `refuseStale` is about to judge: `path`'s version taken before its bytes
   * are read. Undefined when the guard is off or the model never saw the file (nothing to protect).
   */
  async versionBeforeRead(workspace: Workspace, filesystem: Workspace, path: string): Promise<number | undefined> {
    if (!this.staleWriteGuard || !this.has(workspace, path)) return undefined;
    return (await filesystem.stat(path)).version;
  }

  /**
   * `writeBytes` with the version `versionBeforeRead` gave: a change that landed after the check is the
   * same stale failure, nothing written.
   */
  async writeUnchanged(
    filesystem: Workspace,
    path: string,
    bytes: Uint8Array,
    options: WriteOptions,
    version: number | undefined,
    tool: string,
  ): Promise<WriteResult | ToolResult<ToolFailure>> {
    try {
      return await filesystem.writeBytes(path, bytes, version === undefined ? options : { ...options, ifVersion: version });
    } catch (error) {
      if (version === undefined || !(error instanceof ConflictError)) throw error;
      return staleFailure(path, 'it changed while this call ran', tool);
    }
  }

  #map(workspace: Workspace): Map<string, Seen> {
    let map = this.#seen.get(workspace);
    if (map === undefined) {
      map = new Map();
      this.#seen.set(workspace, map);
    }
    return map;
  }
}

function staleFailure(path: string, what: string, tool: string): ToolResult<ToolFailure> {
  return failure(
    'ECONFLICT',
    `${path} changed since you last read it (${what}), by someone else, so ${tool} would overwrite work you have not seen. ` +
      'Nothing was written. Read it again with read_file, then redo the change on what it holds now.',
    { path, reason: 'stale' },
  );
}

/** Whether a write helper returned a refusal rather than the write's result. */
export function isRefusal(result: WriteResult | ToolResult<ToolFailure>): result is ToolResult<ToolFailure> {
  return 'success' in result;
}

function describe(bytes: Uint8Array): Seen {
  // indexOf runs natively: iterating the bytes one by one was most of a 1 MiB read_file's time.
  let lines = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) lines += 1;
  return { digest: createHash('sha1').update(bytes).digest('base64'), sizeBytes: bytes.byteLength, lines };
}
