import { prepareArguments } from './arguments.js';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { MemoryWorkspace } from '../backends/memory/index.js';
import { HostWorkspace } from '../backends/host/index.js';
import { hydrate } from '../host-mounts/hydrate.js';
import { HostMountSchema, type HostMount, type HydrateProgress, type HydrateResult } from '../host-mounts/schema.js';
import { InvalidArgumentError, isWorkspaceError, type WorkspaceErrorCode } from '../workspace/errors.js';
import type { WorkspaceLimits } from '../workspace/limits.js';
import type { BackendKind, SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import type { z } from 'zod';
import { guardWorkspace } from './guard.js';
import { outsideView, SessionQueue } from './queue.js';
import { scrubHostPaths } from './scrub.js';
import type { RunToolOptions, Session, ToolCallRecord, ToolCallResult, ToolContext, ToolDefinition, ToolResult } from './types.js';

export interface CreateSessionOptions {
  /** Default a random UUID. */
  id?: string;
  backend: BackendKind;
  /** Host folders copied into the workspace at creation and again on `reset()`. */
  mounts?: HostMount[];
  /** Required when there are mounts. */
  allowedHostRoots?: string[];
  /** Hydrate, then seal: every mutation raises `ReadOnlyError`, and calls take no snapshot. */
  readOnly?: boolean;
  limits?: Partial<WorkspaceLimits>;
  /** Host backend: the workspace directory (created if missing, never deleted). Default an owned temp dir. */
  root?: string;
  /** Host backend: where snapshots live (outside the root). Default an owned temp dir. */
  gitDir?: string;
  /** Host backend: picomatch globs left out of snapshots and restores. */
  exclude?: string[];
  /** Host backend: default `tracked` for the temp root the session creates, `scan` for a given `root`. */
  changeDetection?: 'scan' | 'tracked';
  /** Hydration progress (creation and `reset()`). */
  onProgress?: (progress: HydrateProgress) => void;
  /** Aborts the hydration at creation. */
  signal?: AbortSignal;
}

/** A `Session` as `createSession` returns it: also tells what the last hydration copied and skipped. */
export interface HydratedSession extends Session {
  /** The last hydration's result (creation or `reset()`); `undefined` without mounts. */
  readonly hydration: HydrateResult | undefined;
}

const BACKENDS: readonly BackendKind[] = ['memory', 'host'];
const HOST_ONLY = ['root', 'gitDir', 'exclude', 'changeDetection'] as const;
const KNOWN_CODES = new Set<string>([
  'ENOENT',
  'EISDIR',
  'ENOTDIR',
  'EEXIST',
  'ENOTEMPTY',
  'EACCES',
  'EROFS',
  'EINVAL',
  'EILSEQ',
  'EFBIG',
  'ESNAPSHOT',
  'ETIMEDOUT',
  'EPERM',
  'EDQUOT',
  'ECONFLICT',
  'EABORT',
  'ETOOL',
]);

/**
 * Which session a piece of async code runs inside a tool call of, and that call's view of the workspace: to
 * refuse re-entrant calls that would deadlock, and so that `session.filesystem` read by a handler is its
 * call-scoped view too (the raw workspace let writes land after an abort's rollback, or after the call).
 */
const callScope = new AsyncLocalStorage<{ session: WorkspaceSession; view: SnapshotableWorkspace }>();

/**
 * What an orchestrator calls per agent session: a workspace on the chosen backend, hydrated from the
 * allow-listed mounts (then sealed when `readOnly`), with `runTool` rolling back every failed call.
 */
export async function createSession(options: CreateSessionOptions): Promise<HydratedSession> {
  const settings = validate(options);
  const session = new WorkspaceSession(settings);
  await session.start();
  return session;
}

interface Settings {
  id: string;
  backend: BackendKind;
  mounts: HostMount[];
  allowedHostRoots: string[];
  readOnly: boolean;
  limits: Partial<WorkspaceLimits> | undefined;
  root: string | undefined;
  gitDir: string | undefined;
  exclude: string[] | undefined;
  changeDetection: 'scan' | 'tracked' | undefined;
  onProgress: ((progress: HydrateProgress) => void) | undefined;
  signal: AbortSignal | undefined;
}

function validate(options: CreateSessionOptions): Settings {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('createSession needs an options object');
  if (!BACKENDS.includes(options.backend))
    throw new InvalidArgumentError(`backend must be one of ${BACKENDS.join(', ')}, got ${JSON.stringify(options.backend)}`);
  if (options.backend === 'memory') {
    for (const key of HOST_ONLY) {
      if (options[key] !== undefined)
        throw new InvalidArgumentError(`${key} is a host-backend option; the memory backend does not take it`);
    }
  }
  if (options.id !== undefined && (typeof options.id !== 'string' || options.id === ''))
    throw new InvalidArgumentError('id must be a non-empty string');
  const mounts = HostMountSchema.array().optional().safeParse(options.mounts);
  if (!mounts.success) {
    throw new InvalidArgumentError(
      `invalid mounts: ${mounts.error.issues.map((issue) => `${issue.path.join('.') || 'mounts'}: ${issue.message}`).join('; ')}`,
    );
  }
  return {
    id: options.id ?? randomUUID(),
    backend: options.backend,
    mounts: options.mounts === undefined ? [] : [...options.mounts],
    allowedHostRoots: options.allowedHostRoots === undefined ? [] : [...options.allowedHostRoots],
    readOnly: options.readOnly === true,
    limits: options.limits,
    root: options.root,
    gitDir: options.gitDir,
    exclude: options.exclude,
    changeDetection: options.changeDetection,
    onProgress: options.onProgress,
    signal: options.signal,
  };
}

type Outcome = { kind: 'result'; value: unknown } | { kind: 'error'; error: unknown } | { kind: 'aborted' };

class WorkspaceSession implements HydratedSession {
  readonly id: string;
  readonly #settings: Settings;
  #workspace: SnapshotableWorkspace | undefined;
  #snapshots: WorkspaceSnapshot[] = [];
  #history: ToolCallRecord[] = [];
  #hydration: HydrateResult | undefined;
  /** Given host root only: the root as it was before hydration, which `reset()` goes back to. */
  #baseline: WorkspaceSnapshot | undefined;
  readonly #queue = new SessionQueue();
  /** The workspace as code outside a call sees it (its operations wait for the calls asked for before them). */
  #outside: { workspace: SnapshotableWorkspace; view: SnapshotableWorkspace } | undefined;
  #disposed = false;
  #hostDirs: string[] = [];

  constructor(settings: Settings) {
    this.id = settings.id;
    this.#settings = settings;
  }

  get filesystem(): SnapshotableWorkspace {
    const scope = callScope.getStore();
    if (scope?.session === this) return scope.view;
    const workspace = this.#current();
    if (this.#outside?.workspace !== workspace) this.#outside = { workspace, view: outsideView(workspace, this.#queue) };
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

  get history(): readonly ToolCallRecord[] {
    return [...this.#history];
  }

  get hydration(): HydrateResult | undefined {
    return this.#hydration;
  }

  async start(): Promise<void> {
    this.#workspace = await this.#populate(this.#settings.signal);
  }

  /** A new workspace, hydrated from the mounts (and sealed when read-only). Disposed again on failure. */
  async #populate(signal: AbortSignal | undefined): Promise<SnapshotableWorkspace> {
    const settings = this.#settings;
    const workspace: SnapshotableWorkspace =
      settings.backend === 'memory'
        ? new MemoryWorkspace({ limits: settings.limits })
        : new HostWorkspace({
            root: settings.root,
            gitDir: settings.gitDir,
            exclude: settings.exclude,
            // A root the session creates is written only through the workspace (handlers touch files through
            // context.filesystem; exec() marks a scan), so it can trust its own dirty set: a snapshot per call
            // then costs O(changes). A root the caller gives may be written by anyone: scan.
            changeDetection: settings.changeDetection ?? (settings.root === undefined ? 'tracked' : 'scan'),
            limits: settings.limits,
          });
    try {
      this.#hostDirs = hostDirectories(settings, workspace);
      this.#baseline = settings.root !== undefined ? await workspace.snapshot({ tag: `session ${this.id} baseline` }) : undefined;
      this.#hydration = undefined;
      if (settings.mounts.length > 0) {
        this.#hydration = await hydrate(workspace, settings.mounts, {
          allowedHostRoots: settings.allowedHostRoots,
          ...(settings.onProgress === undefined ? {} : { onProgress: settings.onProgress }),
          ...(signal === undefined ? {} : { signal }),
        });
      }
      if (settings.readOnly) workspace.seal();
      return workspace;
    } catch (error) {
      await workspace.dispose().catch(() => undefined);
      throw error;
    }
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
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(() => this.#call(tool, rawParams, options.signal)) as Promise<ToolCallResult<T>>;
  }

  async #call(tool: ToolDefinition, rawParams: unknown, signal: AbortSignal | undefined): Promise<ToolCallResult> {
    if (this.#disposed) throw new InvalidArgumentError(`session ${this.id} has been disposed`);
    const workspace = this.#current();
    const startedAt = new Date().toISOString();
    const record = (params: unknown, snapshot: WorkspaceSnapshot | undefined, result: ToolCallResult): ToolCallResult => {
      const entry: ToolCallRecord = { tool: tool.name, params, result, startedAt, finishedAt: new Date().toISOString() };
      if (snapshot !== undefined) entry.snapshot = snapshot;
      this.#history.push(entry);
      return result;
    };

    if (signal?.aborted)
      return record(rawParams, undefined, failed('EABORT', `${tool.name} was aborted before it started; nothing was changed`, false));

    const prepared = prepareArguments(tool.parameters, rawParams);
    if (!prepared.ok)
      return record(
        rawParams,
        undefined,
        failed('EINVAL', this.#scrub(`invalid parameters for ${tool.name}: ${prepared.message}`, false), false),
      );
    let parsed: Awaited<ReturnType<typeof tool.parameters.safeParseAsync>>;
    try {
      parsed = await tool.parameters.safeParseAsync(prepared.params);
    } catch (error) {
      // A refinement that throws instead of reporting an issue.
      return record(rawParams, undefined, failed('EINVAL', `invalid parameters for ${tool.name}: ${this.#errorMessage(error)}`, false));
    }
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((issue) => `${issue.path.length === 0 ? 'parameters' : issue.path.join('.')}: ${issue.message}`)
        .join('; ');
      return record(rawParams, undefined, failed('EINVAL', this.#scrub(`invalid parameters for ${tool.name}: ${issues}`, false), false));
    }
    const params: unknown = parsed.data;

    let snapshot: WorkspaceSnapshot | undefined;
    if (!workspace.readOnly) {
      try {
        snapshot = await workspace.snapshot({ tag: `before ${tool.name}` });
      } catch (error) {
        return record(
          params,
          undefined,
          failed('ESNAPSHOT', `${tool.name} was not run: the snapshot before it failed (${this.#errorMessage(error)})`, false),
        );
      }
      this.#snapshots.push(snapshot);
    }
    // Aborted while the snapshot was taken: the handler must not start (its effects may reach beyond the workspace).
    if (signal?.aborted)
      return record(params, snapshot, failed('EABORT', `${tool.name} was aborted before it started; nothing was changed`, false));

    const guard = guardWorkspace(workspace, tool.name);
    const context: ToolContext = { filesystem: guard.workspace, session: this };
    if (signal !== undefined) context.signal = signal;
    const outcome = await this.#runHandler(tool, params, context, signal);
    guard.revoke();
    // After an abort the handler may still be running: wait for the operations it started, so none lands after the restore.
    await guard.idle();

    let failure: ToolCallResult | undefined;
    try {
      failure = this.#failureOf(tool, outcome, signal);
      if (failure === undefined) {
        const value = (outcome as { kind: 'result'; value: ToolResult }).value;
        const result: ToolCallResult = { ...value, message: this.#scrub(value.message, false), rolledBack: false };
        return record(params, snapshot, result);
      }
    } catch {
      // A result whose getters throw: the call failed, and is rolled back like any other (it escaped the rollback).
      failure = failed('ETOOL', `${tool.name} returned an invalid result (expected { success, message, value? })`, false);
    }
    if (snapshot === undefined) return record(params, snapshot, { ...failure, rolledBack: false });
    try {
      await workspace.restore(snapshot);
    } catch (error) {
      return record(params, snapshot, {
        ...failure,
        message: `${failure.message} (rolling back failed too: ${this.#errorMessage(error)})`,
        rolledBack: false,
        code: 'ESNAPSHOT',
      });
    }
    return record(params, snapshot, { ...failure, rolledBack: true });
  }

  async #runHandler(tool: ToolDefinition, params: unknown, context: ToolContext, signal: AbortSignal | undefined): Promise<Outcome> {
    const settled = callScope
      .run({ session: this, view: context.filesystem }, async () => tool.handler(params, context))
      .then(
        (value): Outcome => ({ kind: 'result', value }),
        (error: unknown): Outcome => ({ kind: 'error', error }),
      );
    if (signal === undefined) return settled;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<Outcome>((resolveAbort) => {
      onAbort = () => resolveAbort({ kind: 'aborted' });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([settled, aborted]);
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  }

  /** The failed result for an outcome, or `undefined` when the call succeeded. */
  #failureOf(tool: ToolDefinition, outcome: Outcome, signal: AbortSignal | undefined): ToolCallResult | undefined {
    if (outcome.kind === 'aborted') return failed('EABORT', `${tool.name} was aborted; its changes were rolled back`, false);
    if (outcome.kind === 'error') {
      if (signal?.aborted) return failed('EABORT', `${tool.name} was aborted; its changes were rolled back`, false);
      const error = outcome.error;
      if (isWorkspaceError(error)) return failed(error.code, this.#scrub(error.message, false), false);
      return failed('ETOOL', `${tool.name} failed: ${this.#errorMessage(error)}`, false);
    }
    const value = outcome.value as Partial<ToolResult> | null | undefined;
    if (typeof value !== 'object' || value === null || typeof value.success !== 'boolean' || typeof value.message !== 'string') {
      return failed('ETOOL', `${tool.name} returned an invalid result (expected { success, message, value? })`, false);
    }
    if (value.success) return undefined;
    const code = signal?.aborted ? 'EABORT' : codeOf(value.value);
    const result: ToolCallResult = { success: false, message: this.#scrub(value.message, false), rolledBack: false, code };
    if (value.value !== undefined) result.value = value.value;
    return result;
  }

  #errorMessage(error: unknown): string {
    if (isWorkspaceError(error)) return this.#scrub(error.message, false);
    const message = error instanceof Error ? error.message : String(error);
    return this.#scrub(message, true);
  }

  #scrub(message: string, allAbsolute: boolean): string {
    return scrubHostPaths(message, { root: this.#workspace?.root, hostDirs: this.#hostDirs, allAbsolute });
  }

  rollbackTo(snapshot: WorkspaceSnapshot): Promise<void> {
    try {
      this.#assertUsable('rollbackTo');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      if (this.#disposed) throw new InvalidArgumentError(`session ${this.id} has been disposed`);
      await this.#current().restore(snapshot);
    });
  }

  reset(): Promise<void> {
    try {
      this.#assertUsable('reset');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(async () => {
      if (this.#disposed) throw new InvalidArgumentError(`session ${this.id} has been disposed`);
      const old = this.#workspace;
      if (old !== undefined) {
        // A given host root outlives its workspace object: put it back as it was before the first hydration.
        if (this.#baseline !== undefined) await this.#restoreBaseline(old, this.#baseline);
        await old.dispose();
        this.#workspace = undefined;
      }
      this.#snapshots = [];
      this.#history = [];
      this.#workspace = await this.#populate(undefined);
    });
  }

  /**
   * Puts a given host root back as it was before the first hydration. A read-only session's workspace is
   * sealed, so it restores through a second, unsealed workspace on the same root and git dir (the given root
   * otherwise kept the last hydration's files, even those deleted from the host since).
   */
  async #restoreBaseline(old: SnapshotableWorkspace, baseline: WorkspaceSnapshot): Promise<void> {
    if (!old.readOnly) {
      await old.restore(baseline);
      return;
    }
    const settings = this.#settings;
    const writer = new HostWorkspace({
      root: settings.root,
      gitDir: (old as HostWorkspace).gitDir,
      exclude: settings.exclude,
      changeDetection: 'scan',
      limits: settings.limits,
    });
    try {
      await writer.restore(baseline);
    } finally {
      await writer.dispose();
    }
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
      const workspace = this.#workspace;
      this.#workspace = undefined;
      await workspace?.dispose();
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

function failed(code: WorkspaceErrorCode | 'EABORT' | 'ETOOL', message: string, rolledBack: boolean): ToolCallResult {
  return { success: false, message, rolledBack, code };
}

/** A failed handler result's code: its `value.code` when it carries a known one (as the tool suite's do), else `ETOOL`. */
function codeOf(value: unknown): ToolCallResult['code'] {
  const code = typeof value === 'object' && value !== null ? (value as { code?: unknown }).code : undefined;
  return typeof code === 'string' && KNOWN_CODES.has(code) ? (code as ToolCallResult['code']) : 'ETOOL';
}

/** Host directories whose paths must never reach a model. */
function hostDirectories(settings: Settings, workspace: SnapshotableWorkspace): string[] {
  const dirs = new Set<string>();
  const add = (dir: string | undefined): void => {
    if (dir === undefined || dir === '' || dir === '/') return;
    dirs.add(resolve(dir));
    try {
      // Also the real path (`/tmp` may be `/private/tmp`): messages from the kernel carry that one.
      dirs.add(realpathSync.native(dir));
    } catch {
      // missing: its given form is enough
    }
  };
  add(settings.root);
  add(settings.gitDir);
  add((workspace as { gitDir?: string }).gitDir);
  for (const root of settings.allowedHostRoots) add(root);
  for (const mount of settings.mounts) add(mount.hostPath);
  add(tmpdir());
  add(homedir());
  add(process.cwd());
  return [...dirs];
}
