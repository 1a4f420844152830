import { createHash } from 'node:crypto';
import { unguardedWorkspace } from '../session/guard.js';
import type { ToolContext, ToolResult } from '../session/types.js';
import type { Workspace } from '../workspace/types.js';
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
 * Which files a model has seen, and their content then, per workspace object. The content digest (not a
 * backend's version counter) is what tells a stale write: it sees every change, by the orchestrator, a
 * shell command, another program on the host or another session, on every backend, and a file changed
 * back to what the model saw is not stale.
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
    return failure(
      'ECONFLICT',
      `${path} changed since you last read it (${what}), by someone else, so ${tool} would overwrite work you have not seen. ` +
        'Nothing was written. Read it again with read_file, then redo the change on what it holds now.',
      { path, reason: 'stale' },
    );
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

function describe(bytes: Uint8Array): Seen {
  let lines = 0;
  for (const byte of bytes) if (byte === 10) lines += 1;
  return { digest: createHash('sha1').update(bytes).digest('base64'), sizeBytes: bytes.byteLength, lines };
}
