import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { claimAuditLog, flushAuditLog } from '../governance/audit.js';
import { hydrate } from '../sources/hydrate.js';
import type { HydrateResult } from '../sources/schema.js';
import { InvalidArgumentError, SnapshotRestoreError } from '../workspace/errors.js';
import { summarizeArguments } from '../history/summary.js';
import type { BlameResult, HistoryActionOptions, HistoryOperation, SessionHistory } from '../history/types.js';
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
import { callScope, runToolCall } from './tool-call.js';
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
import { actorOf, checkTurnLabel, exposeHistory, forkPoint, HistoryHooks } from './history-hooks.js';
import { SessionPrograms } from './session-programs.js';
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

/** The session's lifecycle: one workspace at a time, every call, rollback, reset and dispose in order. */
class WorkspaceSession implements HydratedSession {
  readonly id: string;
  readonly #settings: SessionSettings;
  readonly #origin: WorkspaceOrigin;
  #workspace: SnapshotableWorkspace | undefined;
  #snapshots: WorkspaceSnapshot[] = [];
  #calls: ToolCallRecord[] = [];
  /** Operations in turns, and the snapshots that make them navigable (see `HistoryHooks`). */
  #history: HistoryHooks;
  #hydration: HydrateResult | undefined;
  /** With sources: the state write-back compares the host with (after hydration, then after each write-back). */
  #hydrated: WorkspaceSnapshot | undefined;
  readonly #queue = new SessionQueue();
  /** The workspace as code outside a call sees it (its operations wait for the calls asked for before them). */
  #outside: { workspace: SnapshotableWorkspace; view: SnapshotableWorkspace } | undefined;
  #disposed = false;
  #hostDirs: string[] = [];
  readonly #outbox: Outbox;
  readonly #programs: SessionPrograms;

  constructor(settings: SessionSettings, origin: WorkspaceOrigin, outbox = new Outbox()) {
    this.id = settings.id;
    this.#settings = settings;
    this.#origin = origin;
    this.#outbox = outbox;
    this.#history = new HistoryHooks(settings.id, settings.retention);
    this.#programs = new SessionPrograms(settings.exec);
    registerOutbox(this, outbox);
    exposeHistory(this, {
      state: () => this.#historyTask('history', (workspace) => this.#history.state(workspace)),
      hooks: () => this.#history,
    });
  }

  get filesystem(): SnapshotableWorkspace {
    const scope = callScope.getStore();
    if (scope?.session === this) return scope.view;
    const workspace = this.#current();
    if (this.#outside?.workspace !== workspace) {
      const hooks = this.#history.outsideHooks(
        workspace,
        () => this.#ready(),
        () => !this.#queue.inExclusive() && this.#workspace === workspace,
      );
      this.#outside = { workspace, view: outsideView(workspace, this.#queue, hooks) };
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
    return this.#calls.slice(-this.#settings.retention.maxHistory);
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
      // The state before the first change is the history's start.
      await this.#history.beforeCall(workspace, changing, () => this.#ready());
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
      this.#calls.push(entry);
      await this.#history.record(
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
      return this.#programs.runner().then((runner) => runner.run(scope.view, this.#current(), command, options));
    }
    if (this.#disposed) return Promise.reject(new InvalidArgumentError(`session ${this.id} has been disposed`));
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      await this.#ready();
      const runner = await this.#programs.runner();
      return runner.run(this.#current(), this.#current(), command, options);
    });
  }

  /**
   * Drops the oldest history entries and snapshots beyond `retention`, and has the backend free what only
   * the dropped snapshots held. A release that fails costs storage, not correctness: the call's result stands.
   */
  #retain(): Promise<void> | undefined {
    const { maxHistory, maxSnapshots } = this.#settings.retention;
    // History is cut in batches, `history` shows the newest `maxHistory`: cutting one entry off the front of
    // a full list on every call moved the whole list each time.
    if (this.#calls.length > maxHistory + Math.ceil(maxHistory / 8)) dropOldest(this.#calls, maxHistory);
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
      await this.#history.flush(current);
      const point = at === undefined ? undefined : this.#ownSnapshot(at);
      const { forkWorkspace } = await import('../export/fork.js');
      const workspace = await forkWorkspace(current);
      const settings: SessionSettings = { ...this.#settings, id: randomUUID() };
      let baseline: WorkspaceSnapshot | undefined;
      let history: HistoryHooks;
      try {
        history = await this.#history.fork(workspace, { parent: this.id, child: settings.id }, point);
        if (!workspace.readOnly) baseline = await workspace.snapshot({ tag: `session ${settings.id} forked from ${this.id}` });
      } catch (error) {
        await workspace.dispose().catch(() => undefined);
        throw error;
      }
      const child = new WorkspaceSession(settings, new ForkedWorkspace(workspace, baseline, settings.id), this.#outbox.copy());
      claimAuditLog(workspace, settings.id);
      child.#workspace = workspace;
      child.#snapshots = [...this.#snapshots];
      child.#calls = [...this.#calls];
      child.#history = history;
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
      this.#history.snapshot(id) ??
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
      await this.#history.rollbackTo(workspace, snapshot, this.#scrub(`to ${String((snapshot as { id?: unknown }).id)}`, false));
    });
  }

  /** Opens a turn (see docs/history.md): the operations after it belong to it until the next. Returns its id. */
  turn(label?: string): Promise<string> {
    try {
      this.#assertUsable('turn');
      checkTurnLabel(label);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      this.#assertNotDisposed();
      return this.#history.turn(this.#current(), label);
    });
  }

  history(): Promise<SessionHistory> {
    return this.#historyTask('history', (workspace) => this.#history.view(workspace));
  }

  undo(options?: HistoryActionOptions): Promise<HistoryOperation> {
    return this.#historyTask('undo', (workspace) => this.#history.undo(workspace, options, () => this.#ready()));
  }

  redo(options?: HistoryActionOptions): Promise<HistoryOperation> {
    return this.#historyTask('redo', (workspace) => this.#history.redo(workspace, options, () => this.#ready()));
  }

  blame(path: string): Promise<BlameResult> {
    return this.#historyTask('blame', (workspace) => this.#history.blame(workspace, path));
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
      await this.#programs.close();
      if (old !== undefined) {
        await this.#origin.close(old, 'reset');
        this.#workspace = undefined;
      }
      this.#snapshots = [];
      this.#calls = [];
      this.#history.restart();
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
      await this.#programs.close();
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
