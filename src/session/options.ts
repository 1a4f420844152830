import { randomUUID } from 'node:crypto';
import { parseSources, type HostSource, type HydrateProgress } from '../sources/schema.js';
import type { AuditSink } from '../governance/audit.js';
import { validatePolicy, type WorkspacePolicy } from '../governance/policy.js';
import { validateProtect } from '../governance/protect.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import type { WorkspaceLimits } from '../workspace/limits.js';
import type { ProtocolMethod } from '../workspace/protocol-methods.js';
import type { BackendKind, SnapshotableWorkspace } from '../workspace/types.js';
import { validateRetention, type Retention, type RetentionOptions } from './retention.js';
import type { HydratedSession } from './types.js';
import type { ProgramRunnerOptions } from '../programs/runner.js';
import { validateLimits } from '../programs/validate.js';

/**
 * What `createSession({ namespace, user })` asks of a namespace (`new WorkspaceNamespace(…)` is one): a
 * directory namespace hands out the user's workspace, which the session opens and disposes; a store
 * namespace hands out the user's store session itself.
 */
export type SessionNamespace =
  | { readonly kind: 'directory'; open(user: string): SnapshotableWorkspace; readonly dir?: string }
  | { readonly kind: 'store'; open(user: string, options: { readOnly?: boolean }): Promise<HydratedSession> };

/**
 * Where the workspace comes from: exactly one of `backend` (the session creates its workspace, a fresh
 * one on every `reset()`, and disposes it) or `workspace` (a ready workspace from any backend:
 * `createWorkspace(driver)`). The caller keeps a given workspace: the session never
 * disposes it, and it holds the session's last state afterwards. `reset()` restores it to how it was when
 * the session was created (a snapshot taken then) and replays the sources; a read-only session seals it,
 * so such a session cannot be reset. The options marked "created workspace" configure what `backend`
 * creates and are refused with `workspace`.
 */
export interface CreateSessionOptions {
  /**
   * `'memory'`, `'host'`, or `'overlay'`: the sources are shown lazily (an overlay workspace per source,
   * mounted at its path, never written, writes kept in memory) instead of being copied in; opening costs
   * nothing however big they are.
   */
  backend?: BackendKind;
  /** A ready workspace, from any backend. */
  workspace?: SnapshotableWorkspace;
  /**
   * With `user`: that user's persistent workspace in this namespace (disposed with the session, its files
   * kept). With a store namespace (`new WorkspaceNamespace({ store })`) the session is the user's store
   * session (`namespace.open(user)`): it publishes after each successful call and on dispose.
   */
  namespace?: SessionNamespace;
  /** The user whose workspace in `namespace` the session works on: any string. */
  user?: string;
  /** Default a random UUID. */
  id?: string;
  /** Host folders copied into the workspace at creation and again on `reset()` (hydration). */
  sources?: HostSource[];
  /** Required when there are sources. */
  allowedHostRoots?: string[];
  /** Hydrate, then seal: every mutation raises `ReadOnlyError`, and calls take no snapshot. */
  readOnly?: boolean;
  /**
   * How a failed tool call is undone. `'snapshot'` (default): a snapshot before every changing call, kept
   * in `session.snapshots` for `rollbackTo`. `'journal'`: the former state of each path the call changes is
   * recorded as it goes (a write costs what it touches, not a scan of a host root); a call takes a
   * snapshot only for changes the journal cannot record (delete, rename, copy, restore, commands), so
   * `session.snapshots` holds only those. See docs/sessions-and-rollback.md.
   */
  rollback?: 'snapshot' | 'journal';
  /** Hydration progress (creation and `reset()`). */
  onProgress?: (progress: HydrateProgress) => void;
  /** Aborts the hydration at creation. */
  signal?: AbortSignal;
  /** Created workspace: its limits. */
  limits?: Partial<WorkspaceLimits>;
  /**
   * Created workspace: audit sinks recording every operation, snapshot, restore and tool call (a given
   * workspace is audited by its own `audit` option; the session still records its tool calls there).
   */
  audit?: AuditSink[];
  /**
   * Created workspace (memory or host): what may be touched, checked before every change; hydration skips
   * (and lists in `hydration.skipped`) what it denies. See docs/governance.md.
   */
  policy?: WorkspacePolicy;
  /** Created workspace (memory or host): what the host provides read-only; default `.git`, `.hg`, `.svn`, `.jj`. See docs/security-model.md. */
  protect?: readonly string[];
  /** Created host workspace: the workspace directory (created if missing, never deleted). Default an owned temp dir. */
  root?: string;
  /** Created host workspace: where snapshots live (outside the root). Default an owned temp dir. */
  gitDir?: string;
  /** Created host workspace: picomatch globs left out of snapshots and restores. */
  exclude?: string[];
  /** Created host workspace: default `tracked` for the temp root the session creates, `scan` for a given `root`. */
  changeDetection?: 'scan' | 'tracked';
  /** How much history and how many snapshots the session keeps (default 1000 and 100; the oldest go first). */
  retention?: RetentionOptions;
  /** `session.exec`: the engine programs run in (default bubblewrap) and their limits. See docs/programs.md. */
  exec?: ProgramRunnerOptions;
}

/** Built-in backend settings, validated. */
export interface BackendSettings {
  backend: 'memory' | 'host' | 'overlay';
  limits: Partial<WorkspaceLimits> | undefined;
  audit: AuditSink[] | undefined;
  policy: WorkspacePolicy | undefined;
  protect: readonly string[] | undefined;
  root: string | undefined;
  gitDir: string | undefined;
  exclude: string[] | undefined;
  changeDetection: 'scan' | 'tracked' | undefined;
}

export interface SessionSettings {
  id: string;
  /** Where the workspace comes from: a built-in backend to create, or the caller's own. */
  origin:
    | { kind: 'backend'; settings: BackendSettings }
    | { kind: 'given'; workspace: SnapshotableWorkspace }
    | { kind: 'namespace'; namespace: Extract<SessionNamespace, { kind: 'directory' }>; user: string };
  sources: HostSource[];
  allowedHostRoots: string[];
  readOnly: boolean;
  rollback: 'snapshot' | 'journal';
  onProgress: ((progress: HydrateProgress) => void) | undefined;
  signal: AbortSignal | undefined;
  retention: Retention;
  exec: ProgramRunnerOptions;
}

const BACKENDS = ['memory', 'host', 'overlay'] as const;
const BACKEND_ONLY = ['limits', 'audit', 'policy', 'protect', 'root', 'gitDir', 'exclude', 'changeDetection'] as const;
/** Every option `createSession` takes: any other key is refused, never ignored. */
const KNOWN_OPTIONS: readonly string[] = [
  'backend',
  'workspace',
  'namespace',
  'user',
  'id',
  'sources',
  'allowedHostRoots',
  'readOnly',
  'rollback',
  'onProgress',
  'signal',
  'retention',
  'exec',
  ...BACKEND_ONLY,
];
const HOST_ONLY = ['root', 'gitDir', 'exclude', 'changeDetection'] as const;
const WORKSPACE_METHODS = [
  'read',
  'writeBytes',
  'stat',
  'list',
  'snapshot',
  'restore',
  'seal',
  'dispose',
] as const satisfies readonly ProtocolMethod[];

export function validateSessionOptions(options: CreateSessionOptions): SessionSettings {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('createSession needs an options object');
  const unknown = Object.keys(options).filter((key) => !KNOWN_OPTIONS.includes(key));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`createSession does not take ${unknown.join(', ')} (its options: ${KNOWN_OPTIONS.join(', ')})`);
  if (options.id !== undefined && (typeof options.id !== 'string' || options.id === ''))
    throw new InvalidArgumentError('id must be a non-empty string');
  parseSources(options.sources);
  return {
    id: options.id ?? randomUUID(),
    origin:
      options.namespace !== undefined || options.user !== undefined
        ? namespaceOrigin(options)
        : options.workspace === undefined
          ? { kind: 'backend', settings: backendSettings(options) }
          : givenOrigin(options, options.workspace),
    sources: options.sources === undefined ? [] : [...options.sources],
    allowedHostRoots: options.allowedHostRoots === undefined ? [] : [...options.allowedHostRoots],
    readOnly: options.readOnly === true,
    rollback: rollbackOf(options.rollback),
    onProgress: options.onProgress,
    signal: options.signal,
    retention: validateRetention(options.retention),
    exec: execOptions(options.exec),
  };
}

/** Options earlier versions took under another name: refused naming the new one, never ignored. */
const RENAMED_OPTIONS: Readonly<Record<string, string>> = {
  mounts: "`mounts` is now `sources` (host folders hydrated into the workspace; a source's `mountPath` is now `path`)",
};

/** Refuses an option renamed since an earlier version, naming what replaces it. Shared by every session kind. */
export function refuseRenamed(options: object): void {
  const renamed = Object.keys(options).filter((key) => RENAMED_OPTIONS[key] !== undefined);
  if (renamed.length > 0) throw new InvalidArgumentError(`createSession: ${renamed.map((key) => RENAMED_OPTIONS[key]).join('; ')}`);
}

function execOptions(exec: unknown): ProgramRunnerOptions {
  if (exec === undefined) return {};
  if (typeof exec !== 'object' || exec === null || Array.isArray(exec))
    throw new InvalidArgumentError('exec must be an object: { engine?, limits? }');
  const unknown = Object.keys(exec).filter((key) => key !== 'engine' && key !== 'limits');
  if (unknown.length > 0) throw new InvalidArgumentError(`exec does not take ${unknown.join(', ')} (its options: engine, limits)`);
  const { engine } = exec as ProgramRunnerOptions;
  if (
    engine !== undefined &&
    (typeof engine !== 'object' || engine === null || typeof engine.run !== 'function' || typeof engine.available !== 'function')
  )
    throw new InvalidArgumentError('exec.engine must be an ExecEngine (run, available), e.g. bwrapEngine()');
  const limits = validateLimits((exec as ProgramRunnerOptions).limits);
  return { ...(engine === undefined ? {} : { engine }), limits };
}

function rollbackOf(rollback: unknown): 'snapshot' | 'journal' {
  if (rollback === undefined) return 'snapshot';
  if (rollback === 'snapshot' || rollback === 'journal') return rollback;
  throw new InvalidArgumentError(`rollback must be 'snapshot' or 'journal', got ${JSON.stringify(rollback)}`);
}

/**
 * A session on a store namespace is that namespace's own session for the user: only `readOnly` applies
 * (`id` is the user's, the store keeps the files, and there is nothing to hydrate).
 */
export function storeNamespaceRequest(
  options: CreateSessionOptions,
): { namespace: Extract<SessionNamespace, { kind: 'store' }>; user: string } | undefined {
  const namespace = (options as Partial<CreateSessionOptions> | null)?.namespace;
  if (namespace?.kind !== 'store' || typeof namespace.open !== 'function') return undefined;
  if (typeof options.user !== 'string') throw new InvalidArgumentError('namespace needs user: the user id, a string');
  const extra = Object.keys(options).filter(
    (key) => !['namespace', 'user', 'readOnly'].includes(key) && options[key as keyof CreateSessionOptions] !== undefined,
  );
  if (extra.length > 0)
    throw new InvalidArgumentError(`a store namespace's session takes only user and readOnly; remove ${extra.join(', ')}`);
  return { namespace, user: options.user };
}

function namespaceOrigin(options: CreateSessionOptions): SessionSettings['origin'] {
  const { namespace, user } = options;
  if (namespace === null || typeof namespace !== 'object' || namespace.kind !== 'directory' || typeof namespace.open !== 'function')
    throw new InvalidArgumentError('user needs namespace: a WorkspaceNamespace');
  if (typeof user !== 'string') throw new InvalidArgumentError('namespace needs user: the user id, a string');
  if (options.backend !== undefined || options.workspace !== undefined)
    throw new InvalidArgumentError('pass one of backend, workspace or namespace + user');
  for (const key of BACKEND_ONLY) {
    if (options[key] !== undefined)
      throw new InvalidArgumentError(
        `${key} configures a workspace the session creates; a namespace's workspaces are configured by the namespace`,
      );
  }
  return { kind: 'namespace', namespace, user };
}

function givenOrigin(options: CreateSessionOptions, workspace: SnapshotableWorkspace): SessionSettings['origin'] {
  if (options.backend !== undefined) throw new InvalidArgumentError('pass either backend or workspace, not both');
  for (const key of BACKEND_ONLY) {
    if (options[key] !== undefined)
      throw new InvalidArgumentError(`${key} configures a workspace the session creates; a given workspace already has its own`);
  }
  const candidate: unknown = workspace;
  const missing =
    typeof candidate === 'object' && candidate !== null
      ? WORKSPACE_METHODS.filter((name) => typeof (candidate as Record<string, unknown>)[name] !== 'function')
      : WORKSPACE_METHODS;
  if (missing.length > 0)
    throw new InvalidArgumentError(`workspace must be a SnapshotableWorkspace (e.g. from createWorkspace); missing ${missing.join(', ')}`);
  return { kind: 'given', workspace };
}

function backendSettings(options: CreateSessionOptions): BackendSettings {
  const backend = options.backend;
  if (!BACKENDS.some((name) => name === backend))
    throw new InvalidArgumentError(
      `backend must be one of ${BACKENDS.join(', ')}, got ${JSON.stringify(backend)} (for any other backend, pass workspace: createWorkspace(driver))`,
    );
  if (backend !== 'host') {
    for (const key of HOST_ONLY) {
      if (options[key] !== undefined)
        throw new InvalidArgumentError(`${key} is a host-backend option; the ${String(backend)} backend does not take it`);
    }
  }
  if (backend === 'overlay' && (options.sources === undefined || options.sources.length === 0))
    throw new InvalidArgumentError('the overlay backend shows host directories: give at least one source');
  if (backend === 'overlay' && options.policy !== undefined)
    throw new InvalidArgumentError('the overlay backend does not take policy: use backend memory or host, or a given workspace');
  if (options.policy !== undefined) validatePolicy(options.policy);
  validateProtect(options.protect);
  return {
    backend: backend as BackendSettings['backend'],
    limits: options.limits,
    audit: options.audit,
    policy: options.policy,
    protect: options.protect,
    root: options.root,
    gitDir: options.gitDir,
    exclude: options.exclude,
    changeDetection: options.changeDetection,
  };
}
