import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { claimAuditLog, flushAuditLog } from '../governance/audit.js';
import { hydrate } from '../sources/hydrate.js';
import type { HydrateResult } from '../sources/schema.js';
import { InvalidArgumentError, SnapshotRestoreError } from '../workspace/errors.js';
import { blameFile } from '../history/blame.js';
import type { AuditTrail } from '../history/audit-trail.js';
import { HistoryLog, type HistoryState } from '../history/log.js';
import { summarizeArguments } from '../history/summary.js';
import {
  HISTORY_ACTORS,
  type BlameResult,
  type HistoryActionOptions,
  type HistoryActor,
  type HistoryOperation,
  type SessionHistory,
} from '../history/types.js';
import { protocolMethods } from '../workspace/protocol-methods.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { hostDirectories } from './host-dirs.js';
import { validateSessionOptions, type CreateSessionOptions, type SessionSettings } from './options.js';
import type { ExportResult } from '../export/export-plan.js';
import type { WriteBackOptions } from '../export/write-back.js';
import { Outbox, registerOutbox } from './outbox.js';
import { outsideView, SessionQueue } from './queue.js';
import { dropOldest } from './retention.js';
import { releaseSnapshots } from '../workspace/snapshot-queue.js';
import { scrubHostPaths } from './scrub.js';
import { READ_METHODS } from './call-view.js';
import { callScope, runToolCall } from './tool-call.js';
import type { ProgramRunner } from '../programs/runner.js';
import type { ExecOptions, ExecResult } from '../programs/types.js';
import type {
  ForkOptions,
  HydratedSession,
  MergeSource,
  RunToolOptions,
  ToolCallRecord,
  ToolCallResult,
  ToolDefinition,
  SessionOutput,
} from './types.js';
import { ForkedWorkspace, workspaceOrigin, type WorkspaceOrigin } from './workspace-origin.js';
import { recordFork } from '../history/lineage.js';
import type { MergeOptions, MergeResult } from '../history/merge.js';

/**
 * A session on a workspace: the chosen backend's (or the ready one given, from any backend, or a directory
 * namespace's), hydrated from the allow-listed host sources (then sealed when `readOnly`), with `runTool` rolling
 * back every failed call. `createSession` (create-session.ts) is the public way in.
 */
export async function openWorkspaceSession(options: CreateSessionOptions): Promise<HydratedSession> {
  const settings = validateSessionOptions(options);
  const session = new WorkspaceSession(settings, workspaceOrigin(settings));
  await session.start();
  return session;
}

/** How a stored session reads and resumes a session's history (see `historyState`, `resumeHistory`). */
const historyAccess = new WeakMap<
  object,
  { state(): Promise<HistoryState>; resume(state: HistoryState, head: boolean): void; audit(trail: AuditTrail): void }
>();

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
  historyAccess.get(session)?.resume(state, head);
}

/** Makes each operation of a session's history keep the audit events it caused, from `trail` (a stored session's). */
export function recordAuditInHistory(session: HydratedSession, trail: AuditTrail): void {
  historyAccess.get(session)?.audit(trail);
}

/** The session's lifecycle: one workspace at a time, every call, rollback, reset and dispose in order. */
class WorkspaceSession implements HydratedSession {
  readonly id: string;
  readonly #settings: SessionSettings;
  readonly #origin: WorkspaceOrigin;
  #workspace: SnapshotableWorkspace | undefined;
  #snapshots: WorkspaceSnapshot[] = [];
  #history: ToolCallRecord[] = [];
  /** Operations in turns, and the snapshots that make them navigable (see `HistoryLog`). */
  #log: HistoryLog;
  /** Where the history takes each operation's audit events from, when it keeps them (see `recordAuditInHistory`). */
  #auditTrail: AuditTrail | undefined;
  #hydration: HydrateResult | undefined;
  /** With sources: the state write-back compares the host with (after hydration, then after each write-back). */
  #hydrated: WorkspaceSnapshot | undefined;
  readonly #queue = new SessionQueue();
  /** The workspace as code outside a call sees it (its operations wait for the calls asked for before them). */
  #outside: { workspace: SnapshotableWorkspace; view: SnapshotableWorkspace } | undefined;
  #disposed = false;
  #hostDirs: string[] = [];
  readonly #outbox: Outbox;
  /** Runs `exec`'s programs; made on first use (its mirror of a non-host workspace lives as long as the workspace). */
  #programs: Promise<ProgramRunner> | undefined;

  constructor(settings: SessionSettings, origin: WorkspaceOrigin, outbox = new Outbox()) {
    this.id = settings.id;
    this.#settings = settings;
    this.#origin = origin;
    this.#outbox = outbox;
    this.#log = new HistoryLog(settings.id, settings.retention);
    registerOutbox(this, outbox);
    historyAccess.set(this, {
      state: () =>
        this.#historyTask('history', async (workspace) => {
          await this.#log.flush(workspace);
          return this.#log.state();
        }),
      resume: (state, head) => {
        this.#log = HistoryLog.from(this.id, this.#settings.retention, state, { head });
        this.#log.auditTrail = this.#auditTrail;
      },
      audit: (trail) => {
        this.#auditTrail = trail;
        this.#log.auditTrail = trail;
      },
    });
  }

  get filesystem(): SnapshotableWorkspace {
    const scope = callScope.getStore();
    if (scope?.session === this) return scope.view;
    const workspace = this.#current();
    if (this.#outside?.workspace !== workspace) {
      // A change waits until the origin recorded the starting state (a given host root's baseline), and
      // until the history did; once done, it is noted for the history's next operation (see `HistoryLog`).
      const changes = (property: PropertyKey, args: readonly unknown[]): boolean =>
        isChange(property, args) && !this.#queue.inExclusive() && this.#workspace === workspace;
      this.#outside = {
        workspace,
        view: outsideView(workspace, this.#queue, {
          before: (property, args) => {
            if (READ_METHODS.has(property)) return undefined;
            if (!changes(property, args)) return this.#ready();
            return this.#ready().then(() => this.#log.ensureHead(workspace).catch(() => undefined));
          },
          after: (property, args) => {
            if (changes(property, args)) this.#log.noteChange(String(property), args);
          },
        }),
      };
    }
    return this.#outside.view;
  }

  /** The workspace itself, for the session's own work (inside its queue). */
  #current(): SnapshotableWorkspace {
    if (this.#workspace === undefined) {
      throw new InvalidArgumentError(
        this.#disposed
          ? `session ${this.id} has been disposed`
          : `session ${this.id} has no workspace: its last reset failed (call reset() again, or dispose())`,
      );
    }
    return this.#workspace;
  }

  get snapshots(): readonly WorkspaceSnapshot[] {
    return [...this.#snapshots];
  }

  get calls(): readonly ToolCallRecord[] {
    return this.#history.slice(-this.#settings.retention.maxHistory);
  }

  get outputs(): readonly SessionOutput[] {
    return this.#outbox.outputs;
  }

  readOutput(id: string): Uint8Array {
    return this.#outbox.read(id);
  }

  get hydration(): HydrateResult | undefined {
    return this.#hydration;
  }

  async start(): Promise<void> {
    this.#workspace = await this.#populate(this.#settings.signal);
  }

  /** The origin's workspace, hydrated from the sources (and sealed when read-only). Let go again on failure. */
  async #populate(signal: AbortSignal | undefined): Promise<SnapshotableWorkspace> {
    const settings = this.#settings;
    const workspace = await this.#origin.open();
    claimAuditLog(workspace, this.id);
    try {
      this.#hostDirs = hostDirectories(settings, workspace);
      this.#hydration = undefined;
      if (settings.sources.length > 0 && !this.#origin.showsSources) {
        await this.#ready();
        this.#hydration = await hydrate(workspace, settings.sources, {
          allowedHostRoots: settings.allowedHostRoots,
          ...(settings.onProgress === undefined ? {} : { onProgress: settings.onProgress }),
          ...(signal === undefined ? {} : { signal }),
        });
      }
      this.#hydrated = settings.sources.length > 0 ? await workspace.snapshot({ tag: `session ${this.id} hydrated` }) : undefined;
      this.#noteHostDir(this.#hydrated?.gitDir);
      if (settings.readOnly) workspace.seal();
      return workspace;
    } catch (error) {
      await this.#origin.close(workspace, 'failed').catch(() => undefined);
      throw error;
    }
  }

  /** Resolves once the workspace may change (see `WorkspaceOrigin.ready`). */
  #ready(): Promise<void> {
    return this.#origin.ready?.() ?? Promise.resolve();
  }

  /** Runs `task` after every earlier call, reset, rollback or dispose on this session has finished. */
  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    return this.#queue.exclusive(task);
  }

  #assertUsable(action: string): void {
    if (callScope.getStore()?.session === this) {
      throw new InvalidArgumentError(`${action} cannot be called from inside a tool call on the same session (it would wait for itself)`);
    }
    if (this.#disposed) throw new InvalidArgumentError(`session ${this.id} has been disposed`);
  }

  #assertNotDisposed(): void {
    if (this.#disposed) throw new InvalidArgumentError(`session ${this.id} has been disposed`);
  }

  runTool<Schema extends z.ZodType, T>(
    tool: ToolDefinition<Schema, T>,
    rawParams: unknown,
    options: RunToolOptions = {},
  ): Promise<ToolCallResult<T>> {
    try {
      this.#assertUsable('runTool');
      if (
        typeof tool !== 'object' ||
        tool === null ||
        typeof tool.handler !== 'function' ||
        typeof tool.parameters?.safeParseAsync !== 'function'
      ) {
        throw new InvalidArgumentError('runTool needs a tool defined with defineTool (name, parameters, handler)');
      }
      actorOf(options, 'model');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      const sent = this.#outbox.size;
      const workspace = this.#current();
      const changing = !workspace.readOnly && tool.annotations?.readOnlyHint !== true;
      await this.#log.flush(workspace);
      // The state before the first change is the history's start (a failure here is the call's to report).
      if (changing)
        await this.#ready()
          .then(
            () => this.#log.ensureHead(workspace),
            () => undefined,
          )
          .catch(() => undefined);
      const entry = await runToolCall(
        {
          session: this,
          workspace,
          scrub: (message, allAbsolute) => this.#scrub(message, allAbsolute),
          addSnapshot: (snapshot) => {
            this.#snapshots.push(snapshot);
            this.#noteHostDir(snapshot.gitDir);
          },
          rollback: this.#settings.rollback,
          ready: () => this.#ready(),
        },
        tool as ToolDefinition,
        rawParams,
        options.signal,
      );
      // A failed call is taken as not done: a file it sent is not sent.
      if (!entry.result.success) this.#outbox.dropAfter(sent);
      this.#history.push(entry);
      await this.#log.record(
        workspace,
        {
          actor: actorOf(options, 'model'),
          kind: 'call',
          tool: tool.name,
          summary: this.#scrub(summarizeArguments(entry.params), false),
          startedAt: entry.startedAt,
          outcome: entry.result.success ? 'ok' : 'failed',
          ...(entry.result.code === undefined ? {} : { code: entry.result.code }),
          callId: entry.callId,
        },
        { changing },
      );
      const released = this.#retain();
      if (released !== undefined) await released;
      return entry.result;
    }) as Promise<ToolCallResult<T>>;
  }

  exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult> {
    const scope = callScope.getStore();
    if (scope?.session === this) {
      // Inside one of this session's calls: applied through the call's view, so the call's rollback undoes it.
      return this.#runner().then((runner) => runner.run(scope.view, this.#current(), command, options));
    }
    if (this.#disposed) return Promise.reject(new InvalidArgumentError(`session ${this.id} has been disposed`));
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      await this.#ready();
      const runner = await this.#runner();
      return runner.run(this.#current(), this.#current(), command, options);
    });
  }

  #runner(): Promise<ProgramRunner> {
    // Loaded when first used, as `fork`'s: a session that never runs a program starts without it.
    this.#programs ??= import('../programs/runner.js').then(({ ProgramRunner }) => new ProgramRunner(this.#settings.exec));
    return this.#programs;
  }

  /** Removes the programs' mirror of a workspace that is going away. */
  async #closePrograms(): Promise<void> {
    const programs = this.#programs;
    this.#programs = undefined;
    if (programs !== undefined) (await programs.catch(() => undefined))?.dispose();
  }

  /**
   * Drops the oldest history entries and snapshots beyond `retention`, and has the backend free what only
   * the dropped snapshots held. A release that fails costs storage, not correctness: the call's result stands.
   */
  #retain(): Promise<void> | undefined {
    const { maxHistory, maxSnapshots } = this.#settings.retention;
    // History is cut in batches, `history` shows the newest `maxHistory`: cutting one entry off the front of
    // a full list on every call moved the whole list each time.
    if (this.#history.length > maxHistory + Math.ceil(maxHistory / 8)) dropOldest(this.#history, maxHistory);
    const released = dropOldest(this.#snapshots, maxSnapshots);
    if (released.length === 0 || this.#workspace === undefined) return undefined;
    return releaseSnapshots(this.#workspace, released).catch(() => undefined);
  }

  /** A snapshot record's repository (a host workspace's git dir) is a host directory to keep from the model too. */
  #noteHostDir(dir: string | undefined): void {
    if (dir !== undefined && !this.#hostDirs.includes(dir)) this.#hostDirs.push(dir);
  }

  #scrub(message: string, allAbsolute: boolean): string {
    return scrubHostPaths(message, { root: this.#workspace?.root, hostDirs: this.#hostDirs, allAbsolute });
  }

  writeBack(options?: WriteBackOptions): Promise<ExportResult> {
    try {
      this.#assertUsable('writeBack');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      await this.#ready();
      const settings = this.#settings;
      // Loaded when first used, as `fork`'s: a session that never writes back or forks starts without them.
      const { writeBackToSources } = await import('../export/write-back.js');
      const done = await writeBackToSources(this.filesystem, settings.sources, settings.allowedHostRoots, this.#hydrated, options);
      if (done.baseline !== undefined) this.#hydrated = done.baseline;
      return done.result;
    });
  }

  fork(options?: ForkOptions): Promise<HydratedSession> {
    let at: WorkspaceSnapshot | string | undefined;
    try {
      this.#assertUsable('fork');
      at = forkPoint(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      await this.#ready();
      const current = this.#current();
      await this.#log.flush(current);
      const point = at === undefined ? undefined : this.#ownSnapshot(at);
      const { forkWorkspace } = await import('../export/fork.js');
      const workspace = await forkWorkspace(current);
      const settings: SessionSettings = { ...this.#settings, id: randomUUID() };
      let baseline: WorkspaceSnapshot | undefined;
      const log = this.#log.copy(settings.id);
      try {
        if (point !== undefined) {
          const startedAt = new Date().toISOString();
          await log.ensureHead(workspace);
          await workspace.restore(point);
          await log.record(
            workspace,
            { actor: 'orchestrator', kind: 'restore', tool: 'fork', summary: `forked from ${this.id} at ${point.id}`, startedAt },
            { changing: true },
          );
        }
        if (!workspace.readOnly) baseline = await workspace.snapshot({ tag: `session ${settings.id} forked from ${this.id}` });
      } catch (error) {
        await workspace.dispose().catch(() => undefined);
        throw error;
      }
      const child = new WorkspaceSession(settings, new ForkedWorkspace(workspace, baseline, settings.id), this.#outbox.copy());
      claimAuditLog(workspace, settings.id);
      child.#workspace = workspace;
      child.#snapshots = [...this.#snapshots];
      child.#history = [...this.#history];
      child.#log = log;
      child.#hydration = this.#hydration;
      child.#hydrated = this.#hydrated;
      child.#hostDirs = hostDirectories(settings, workspace);
      if (baseline !== undefined) recordFork(this, child, baseline);
      return child;
    });
  }

  async merge(other: MergeSource, options?: MergeOptions): Promise<MergeResult> {
    this.#assertUsable('merge');
    // Loaded when first used, as `fork`'s.
    const { mergeSession } = await import('./merge.js');
    return mergeSession(this, other, options);
  }

  /**
   * A snapshot of this session's (its history's, its calls', its hydration's), by record or id; anything
   * else is `SnapshotRestoreError`, before anything is done.
   */
  #ownSnapshot(at: WorkspaceSnapshot | string): WorkspaceSnapshot {
    const id = typeof at === 'string' ? at : at.id;
    const found =
      this.#log.snapshot(id) ??
      this.#snapshots.find((record) => record.id === id) ??
      (this.#hydrated?.id === id ? this.#hydrated : undefined);
    if (found === undefined || (typeof at !== 'string' && (found.ref !== at.ref || found.backend !== at.backend)))
      throw new SnapshotRestoreError(`snapshot ${id} is not one of session ${this.id}'s (its history, its calls' or its hydration's)`);
    return found;
  }

  rollbackTo(snapshot: WorkspaceSnapshot): Promise<void> {
    try {
      this.#assertUsable('rollbackTo');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      await this.#ready();
      const workspace = this.#current();
      await this.#log.flush(workspace);
      await this.#log.ensureHead(workspace).catch(() => undefined);
      const startedAt = new Date().toISOString();
      await workspace.restore(snapshot);
      const summary = this.#scrub(`to ${String((snapshot as { id?: unknown }).id)}`, false);
      await this.#log.record(
        workspace,
        { actor: 'orchestrator', kind: 'restore', tool: 'rollbackTo', summary, startedAt },
        { changing: true },
      );
    });
  }

  /** Opens a turn (see docs/history.md): the operations after it belong to it until the next. Returns its id. */
  turn(label?: string): Promise<string> {
    try {
      this.#assertUsable('turn');
      if (label !== undefined && (typeof label !== 'string' || label.length > 200))
        throw new InvalidArgumentError('a turn label must be a string of at most 200 characters');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      await this.#log.flush(this.#current());
      return this.#log.openTurn(label);
    });
  }

  history(): Promise<SessionHistory> {
    return this.#historyTask('history', async (workspace) => {
      await this.#log.flush(workspace);
      return this.#log.view();
    });
  }

  undo(options?: HistoryActionOptions): Promise<HistoryOperation> {
    return this.#historyTask('undo', async (workspace) => {
      const actor = actorOf(options, 'orchestrator');
      await this.#ready();
      await this.#log.flush(workspace);
      return this.#log.undo(workspace, actor);
    });
  }

  redo(options?: HistoryActionOptions): Promise<HistoryOperation> {
    return this.#historyTask('redo', async (workspace) => {
      const actor = actorOf(options, 'orchestrator');
      await this.#ready();
      await this.#log.flush(workspace);
      return this.#log.redo(workspace, actor);
    });
  }

  blame(path: string): Promise<BlameResult> {
    return this.#historyTask('blame', async (workspace) => {
      await this.#log.flush(workspace);
      return blameFile(workspace, this.#log.readable(), path);
    });
  }

  /** A history call: refused inside a call on this session, then run in order with the others. */
  #historyTask<T>(action: string, task: (workspace: SnapshotableWorkspace) => Promise<T>): Promise<T> {
    try {
      this.#assertUsable(action);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      return task(this.#current());
    });
  }

  reset(): Promise<void> {
    try {
      this.#assertUsable('reset');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      const old = this.#workspace;
      await this.#closePrograms();
      if (old !== undefined) {
        await this.#origin.close(old, 'reset');
        this.#workspace = undefined;
      }
      this.#snapshots = [];
      this.#history = [];
      this.#log = new HistoryLog(this.id, this.#settings.retention);
      this.#log.auditTrail = this.#auditTrail;
      this.#workspace = await this.#populate(undefined);
    });
  }

  dispose(): Promise<void> {
    if (callScope.getStore()?.session === this) {
      return Promise.reject(
        new InvalidArgumentError('dispose cannot be called from inside a tool call on the same session (it would wait for itself)'),
      );
    }
    return this.#enqueue(async () => {
      if (this.#disposed) return;
      this.#disposed = true;
      await this.#closePrograms();
      const workspace = this.#workspace;
      this.#workspace = undefined;
      if (workspace === undefined) return;
      try {
        await this.#origin.close(workspace, 'dispose');
      } finally {
        // A workspace the session does not dispose (one it was given) still holds the session's tool calls.
        flushAuditLog(workspace);
      }
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

/** Protocol methods that change the workspace (a dry-run restore does not), and `exec`. */
const CHANGES: ReadonlySet<PropertyKey> = new Set([...protocolMethods((method) => method.kind === 'change'), 'exec']);

function isChange(property: PropertyKey, args: readonly unknown[]): boolean {
  if (!CHANGES.has(property)) return false;
  return !(property === 'restore' && (args[1] as { dryRun?: unknown } | null | undefined)?.dryRun === true);
}

/** The `actor` option, checked: one of `model`, `orchestrator`, `user`. */
function actorOf(options: { actor?: unknown } | null | undefined, fallback: HistoryActor): HistoryActor {
  if (options !== undefined && options !== null && typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
  const actor = options?.actor;
  if (actor === undefined) return fallback;
  if (!HISTORY_ACTORS.includes(actor as HistoryActor))
    throw new InvalidArgumentError(`actor must be one of ${HISTORY_ACTORS.join(', ')}, got ${JSON.stringify(actor)}`);
  return actor as HistoryActor;
}

/** `fork`'s options, checked: nothing but `at` (a snapshot record or id). */
function forkPoint(options: ForkOptions | undefined): WorkspaceSnapshot | string | undefined {
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
