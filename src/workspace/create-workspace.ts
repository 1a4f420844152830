import { registerAuditLog, type AuditRecorder } from '../governance/audit.js';
import { AUDITED } from '../governance/audited-methods.js';
import type { Governance } from '../governance/governance.js';
import type { WorkspacePolicy } from '../governance/policy.js';
import type { Protection } from '../governance/protect.js';
import { registerTrust } from '../governance/trust.js';
import type { WatchLayer } from '../governance/watch-layer.js';
import type { BackendDriver, SnapshotTree } from './driver.js';
import { composeLayers, type CreateWorkspaceOptions } from './layers.js';

export type { CreateWorkspaceOptions } from './layers.js';
import { InvalidArgumentError, NotSupportedError, PolicyError, ReadOnlyError } from './errors.js';
import { globFiles, grepFiles, type SearchEntry, type SearchSource } from './glob-grep.js';
import { optionsObject } from './arguments.js';
import type { WorkspaceLimits } from './limits.js';
import { displayInput, normalizeInside, type NormalizedPath } from './paths.js';
import { encodeUtf8 } from './text.js';
import { copyBytes } from './bytes.js';
import { byteRange, bytesResult, lineRange, textResult } from './read-results.js';
import { DriverProbe } from './probe.js';
import type { LongCallOptions } from './progress.js';
import { SnapshotQueue } from './snapshot-queue.js';
import { isWriteContent, openReadStream, openWriteStream } from './streams.js';
import { WorkspaceMutations } from './mutations.js';
import type {
  CopyOptions,
  DeleteOptions,
  DiffEntry,
  GlobMatch,
  GlobOptions,
  GrepMatch,
  GrepOptions,
  ListEntry,
  MkdirOptions,
  ReadBytesOptions,
  ReadBytesResult,
  ReadOptions,
  ReadResult,
  ReadStreamOptions,
  RenameOptions,
  RestoreOptions,
  RestoreResult,
  SnapshotableWorkspace,
  SnapshotOptions,
  StatResult,
  WorkspaceSnapshot,
  WriteFilesEntry,
  WriteFilesResult,
  WriteOptions,
  WriteResult,
  WriteStreamOptions,
} from './types.js';
import type { WatchEvent, WatchOptions } from './watch-event.js';

/**
 * What `createWorkspace` builds: the protocol with snapshots, plus what every backend reaches through the
 * shared layer (its policy and `protect` rules, `fork()` and `markChanged()`, delegated to the driver).
 */
export interface ManagedWorkspace extends SnapshotableWorkspace {
  /** The policy in force (frozen), if any. */
  readonly policy: Readonly<WorkspacePolicy> | undefined;
  /** The `protect` patterns in force (frozen). */
  readonly protect: readonly string[];
  /** See {@link Workspace.writeFiles}: every workspace built here has it. */
  writeFiles(entries: readonly WriteFilesEntry[]): Promise<WriteFilesResult>;
  /**
   * An independent workspace with the same content, history (every snapshot taken before the fork restores
   * there too), limits, policy, `protect` rules and read-only state: the driver's `fork()` under a new
   * workspace. `NotSupportedError` (`ENOTSUP`) when the driver cannot fork (overlay, composition, store).
   * Run it between operations, as `session.fork()` does: a write made meanwhile may or may not be in the fork.
   */
  fork(): Promise<ManagedWorkspace>;
  /**
   * Tells the workspace that paths changed behind its back (another process wrote them; every path when
   * omitted), so the next snapshot sees them. A no-op where every change goes through the protocol (memory,
   * overlay, store); on the host it matters with `changeDetection: 'tracked'`.
   */
  markChanged(paths?: readonly string[]): void;
}

/**
 * The one way to build a workspace: the shared layer (see {@link DriverWorkspace}) over a driver, e.g.
 * `createWorkspace(memoryDriver())`, `createWorkspace(hostDriver({ root }), { policy })`.
 */
export function createWorkspace(driver: BackendDriver, options: CreateWorkspaceOptions = {}): ManagedWorkspace {
  return new DriverWorkspace(driver, options);
}

/** What an operation is about to do, as the one admission point sees it. */
type Operation = 'read' | 'write' | 'mkdir' | 'delete' | 'rename' | 'copy' | 'restore';
const MUTATIONS: ReadonlySet<Operation> = new Set(['write', 'mkdir', 'delete', 'rename', 'copy', 'restore']);

/**
 * The shared layer every backend runs behind: argument and path validation, read-only mode (checked
 * first), creation limits, error mapping, the preconditions of every mutation (checked with `kind()` while
 * holding a lock on each path involved), glob and grep, and snapshots (the driver's own `Snapshotter`, or
 * content-addressed blobs). Every backend is this class over its driver, under the layers `composeLayers`
 * builds once (see `WorkspaceLayers`); each method admits, guards and audits itself through them.
 */
export class DriverWorkspace implements ManagedWorkspace {
  /** The driver's name. */
  readonly backend: string;
  /** `/`, or what the driver names as its root (a host directory: never show it to a model). */
  readonly root: string;
  readonly limits: Readonly<WorkspaceLimits>;
  /** The policy in force (frozen), if any. */
  readonly policy: Readonly<WorkspacePolicy> | undefined;
  /** The `protect` patterns in force (frozen): what the host provided read-only. See docs/security-model.md. */
  readonly protect: readonly string[];
  /** What the protocol mutates through (the driver under its layers: see `composeLayers`). */
  readonly #driver: BackendDriver;
  /**
   * The driver as given, under no layer: what `fork` and `markChanged` delegate to (and what a test may look
   * at behind the shared layer). The protocol never calls it directly.
   */
  protected readonly driver: BackendDriver;
  readonly #options: CreateWorkspaceOptions;
  readonly #snapshots: SnapshotQueue;
  readonly #probe: DriverProbe;
  readonly #mutations: WorkspaceMutations;
  readonly #governance: Governance;
  readonly #protection: Protection;
  readonly #watch: WatchLayer;
  /** How every protocol method records itself (see `AuditRecorder`): nothing without sinks. */
  readonly #audit: AuditRecorder;
  #readOnly: boolean;
  #disposed = false;

  constructor(driver: BackendDriver, options: CreateWorkspaceOptions = {}) {
    const layers = composeLayers(driver, options);
    this.driver = layers.own;
    this.#options = options;
    this.#driver = layers.driver;
    this.limits = layers.limits;
    this.#readOnly = layers.readOnly;
    this.backend = layers.own.name;
    this.root = layers.own.root ?? '/';
    this.#governance = layers.governance;
    this.policy = layers.governance.policy;
    this.#protection = layers.protection;
    this.protect = layers.protection.rules.patterns;
    this.#watch = layers.watch;
    this.#audit = layers.audit;
    this.#probe = new DriverProbe(layers.reader);
    this.#mutations = new WorkspaceMutations({
      driver: layers.driver,
      probe: this.#probe,
      governance: layers.governance,
      protection: layers.protection,
      limits: layers.limits,
      changed: (paths) => this.#snapshots.changed(paths),
    });
    const protection = layers.protection;
    const versioned = layers.versioned;
    const left = {
      leavesAlone: protection.leavesAlone,
      rootOf: (path: string) => protection.rules.rootOf(path)?.root ?? path,
      reason: (path: string) => protection.skipReason(path),
    };
    this.#snapshots = new SnapshotQueue(layers.snapshotter, this.#governance, this.backend, this, {
      driver: versioned,
      left,
      active: protection.active,
    });
    registerTrust(this, {
      protection,
      admits: async (path, intent) => {
        try {
          await this.#governance.checkAccess(path, intent);
          return true;
        } catch (error) {
          if (error instanceof PolicyError) return false;
          throw error;
        }
      },
      restoreOnly: (snapshot, roots) => this.#snapshots.restoreOnly(snapshot, roots, versioned),
    });
    registerAuditLog(this, this.#audit);
    layers.own.attach?.({ readOnly: this.#readOnly });
  }

  async fork(): Promise<ManagedWorkspace> {
    if (this.#disposed) throw new InvalidArgumentError('the workspace has been disposed');
    if (typeof this.driver.fork !== 'function') throw new NotSupportedError(`the ${this.backend} backend cannot fork a workspace`);
    const driver = await this.driver.fork();
    const { blobs } = this.#options;
    return new DriverWorkspace(driver, {
      limits: this.limits,
      readOnly: this.readOnly,
      protect: this.protect,
      ...(this.policy === undefined ? {} : { policy: this.policy }),
      ...(blobs === undefined ? {} : { blobs }),
    });
  }

  markChanged(paths?: readonly string[]): void {
    this.driver.markChanged?.(paths);
  }

  get readOnly(): boolean {
    return this.#readOnly;
  }

  /** Makes the workspace read-only from now on. One way: a sealed workspace cannot be unsealed. */
  seal(): void {
    this.#readOnly = true;
  }

  /**
   * Read-only mode, checked before anything else (even the path); the policy's path rules come next.
   * Returns the operation's options as an object (absent or `null`: `{}`; not an object: `EINVAL`).
   */
  protected admit<O extends object = object>(operation: Operation, pathInput?: unknown, options?: O | null): O {
    if (MUTATIONS.has(operation) && this.#readOnly) throw new ReadOnlyError(displayInput(pathInput));
    return optionsObject(options, operation);
  }

  // ---- reading ----------------------------------------------------------------------------------------

  async read(path: string, given?: ReadOptions): Promise<ReadResult> {
    const call = this.#audit.start();
    try {
      const options = this.admit('read', path, given);
      const target = await this.#governance.admit(path, 'file');
      const range = lineRange(options);
      const { content } = await this.#readFile(target, { offset: 0 });
      return this.#audit.ok(call, AUDITED.read, path, textResult(target, content, range));
    } catch (error) {
      throw this.#audit.failed(call, AUDITED.read, path, error);
    }
  }

  async readBytes(path: string, given?: ReadBytesOptions): Promise<ReadBytesResult> {
    const call = this.#audit.start();
    try {
      const options = this.admit('read', path, given);
      const target = await this.#governance.admit(path, 'file');
      const range = byteRange(options);
      const { content, sizeBytes } = await this.#readFile(target, range);
      // The driver may hand out its stored bytes (the shared layer's own readers only look): the caller gets a copy.
      const own = copyBytes(content);
      return this.#audit.ok(call, AUDITED.readBytes, path, bytesResult(target, range.offset, own, sizeBytes));
    } catch (error) {
      throw this.#audit.failed(call, AUDITED.readBytes, path, error);
    }
  }

  #readFile(target: NormalizedPath, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }> {
    return this.#probe.readFile(target, range);
  }

  exists(path: string): Promise<boolean> {
    return this.#audit.record(AUDITED.exists, path, undefined, async () => {
      this.admit('read', path);
      const target = normalizeInside(path);
      if (target === undefined) return false;
      await this.#governance.checkAccess(target, 'any');
      return this.#probe.exists(target);
    });
  }

  stat(path: string): Promise<StatResult> {
    return this.#audit.record(AUDITED.stat, path, undefined, async () => {
      this.admit('read', path);
      return this.#probe.statResult(await this.#governance.admit(path, 'any'));
    });
  }

  list(path = '.'): Promise<ListEntry[]> {
    return this.#audit.record(AUDITED.list, path ?? '.', undefined, async () => {
      this.admit('read', path);
      return this.#probe.listEntries(await this.#governance.admit(path, 'directory'));
    });
  }

  glob(pattern: string, given?: GlobOptions): Promise<GlobMatch[]> {
    return this.#audit.record(AUDITED.glob, given?.path ?? '.', undefined, async () => {
      const options = this.admit('read', given?.path, given);
      await this.#governance.admit(options.path ?? '.', 'any');
      return globFiles(this.#searchSource, pattern, options, this.limits.searchTimeoutMs);
    });
  }

  grep(pattern: string, given?: GrepOptions): Promise<GrepMatch[]> {
    return this.#audit.record(AUDITED.grep, given?.path ?? '.', undefined, async () => {
      const options = this.admit('read', given?.path, given);
      await this.#governance.admit(options.path ?? '.', 'any');
      return grepFiles(this.#searchSource, pattern, options, this.limits.searchTimeoutMs);
    });
  }

  /** What glob and grep walk: files include links to files inside the root; walks never enter a link. */
  readonly #searchSource: SearchSource = {
    walk: (base: NormalizedPath, descend?: (directory: NormalizedPath) => boolean): AsyncIterable<readonly SearchEntry[]> =>
      this.#probe.searchWalk(base, descend),
    readFile: async (path: NormalizedPath): Promise<Uint8Array> => (await this.#readFile(path, { offset: 0 })).content,
    pinDirectory: (path: NormalizedPath) => this.#driver.pinSearchDirectory?.(path),
  };

  // ---- writing ----------------------------------------------------------------------------------------

  async write(path: string, content: string, given?: WriteOptions): Promise<WriteResult> {
    const call = this.#audit.start();
    try {
      const options = this.admit('write', path, given);
      if (typeof content !== 'string')
        throw new InvalidArgumentError('write content must be a string (use writeBytes for bytes)', displayInput(path));
      return this.#audit.ok(call, AUDITED.write, path, await this.#mutations.write(path, encodeUtf8(content), options));
    } catch (error) {
      throw this.#audit.failed(call, AUDITED.write, path, error, content);
    }
  }

  async writeBytes(path: string, content: Uint8Array, given?: WriteOptions): Promise<WriteResult> {
    const call = this.#audit.start();
    try {
      const options = this.admit('write', path, given);
      if (!isWriteContent(content)) throw new InvalidArgumentError('writeBytes content must be a Uint8Array', displayInput(path));
      // Copied before the first await: once this call returns its promise the caller's bytes are its own again.
      const own = content instanceof Uint8Array ? copyBytes(content) : content;
      return this.#audit.ok(call, AUDITED.writeBytes, path, await this.#mutations.write(path, own, options));
    } catch (error) {
      throw this.#audit.failed(call, AUDITED.writeBytes, path, error, content);
    }
  }

  /** See {@link Workspace.createReadStream}; docs/governance.md, "Streaming large files". */
  createReadStream(path: string, given?: ReadStreamOptions): Promise<ReadableStream<Uint8Array>> {
    return this.#audit.record(AUDITED.createReadStream, path, undefined, async () => {
      const options = this.admit('read', path, given);
      return openReadStream(this.#driver, this.#probe, await this.#governance.admit(path, 'file'), options);
    });
  }

  /** See {@link Workspace.createWriteStream}: the close commits through `writeBytes`, so every rule of a write applies. */
  createWriteStream(path: string, given?: WriteStreamOptions): Promise<WritableStream<Uint8Array>> {
    return this.#audit.record(AUDITED.createWriteStream, path, undefined, async () => {
      const options = this.admit('write', path, given);
      const target = await this.#governance.admit(path, 'file');
      await this.#protection.guard(target);
      const commit = (staged: Uint8Array, opts: WriteOptions) => this.writeBytes(path, staged, opts);
      return openWriteStream(this.#driver, this.#probe, target, options, this.policy, commit);
    });
  }

  mkdir(path: string, given?: MkdirOptions): Promise<void> {
    return this.#audit.record(AUDITED.mkdir, path, undefined, async () => this.#mutations.mkdir(path, this.admit('mkdir', path, given)));
  }

  delete(path: string, given?: DeleteOptions): Promise<void> {
    return this.#audit.record(AUDITED.delete, path, undefined, async () => this.#mutations.delete(path, this.admit('delete', path, given)));
  }

  rename(from: string, to: string, given?: RenameOptions): Promise<void> {
    return this.#audit.record(AUDITED.rename, from, to, async () => {
      const options = this.admit('rename', from, given);
      await this.#mutations.transfer('move', from, to, options.overwrite === true, true);
    });
  }

  copy(from: string, to: string, given?: CopyOptions): Promise<void> {
    return this.#audit.record(AUDITED.copy, from, to, async () => {
      const options = this.admit('copy', from, given);
      await this.#mutations.transfer('copy', from, to, options.overwrite === true, options.recursive === true);
    });
  }

  /** Recorded once by the audit, as one operation: the writes and directories it makes are not. */
  writeFiles(entries: readonly WriteFilesEntry[]): Promise<WriteFilesResult> {
    return this.#audit.record(AUDITED.writeFiles, undefined, undefined, async () => {
      this.admit('write');
      return this.#mutations.writeFiles(entries, this.policy !== undefined);
    });
  }

  /** See {@link Workspace.setExecutable}. */
  setExecutable(path: string, executable: boolean): Promise<void> {
    return this.#audit.record(AUDITED.setExecutable, path, undefined, async () => {
      this.admit('write', path);
      await this.#mutations.setExecutable(path, executable);
    });
  }

  /** See {@link Workspace.symlink}. */
  symlink(target: string, path: string): Promise<void> {
    return this.#audit.record(AUDITED.symlink, path, undefined, async () => {
      this.admit('write', path);
      await this.#mutations.symlink(target, path);
    });
  }

  /** See {@link Workspace.readlink}: the link itself is read, never followed. */
  readlink(path: string): Promise<string> {
    return this.#audit.record(AUDITED.readlink, path, undefined, async () => {
      this.admit('read', path);
      return this.#probe.readlink(await this.#governance.admit(path, 'any'));
    });
  }

  // ---- snapshots ---------------------------------------------------------------------------------------

  snapshot(given?: SnapshotOptions): Promise<WorkspaceSnapshot> {
    return this.#audit.record(AUDITED.snapshot, undefined, undefined, () => this.#snapshots.snapshot(optionsObject(given, 'snapshot')));
  }

  /** Watchers are told what it changed (see `WatchLayer.restore`). `dryRun`: the preview, nothing changed (not audited as a change). */
  restore(snapshot: WorkspaceSnapshot, options?: RestoreOptions): Promise<RestoreResult> {
    const dryRun = (options as RestoreOptions | null | undefined)?.dryRun;
    if (dryRun !== undefined && typeof dryRun !== 'boolean') return Promise.reject(new InvalidArgumentError('dryRun must be a boolean'));
    if (dryRun === true) {
      const readOnly = this.readOnly ? 'the workspace is read-only' : undefined;
      return this.#audit.record(AUDITED.diff, undefined, undefined, () => this.#snapshots.preview(snapshot, options, () => readOnly));
    }
    return this.#audit.record(AUDITED.restore, undefined, undefined, async () => {
      this.admit('restore');
      return this.#watch.restore(
        () => this.#snapshots.restore(snapshot, options),
        () => this.#snapshots.diff(snapshot),
      );
    });
  }

  diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<DiffEntry[]> {
    return this.#audit.record(AUDITED.diff, undefined, undefined, () => this.#snapshots.diff(from, to, options));
  }

  /** A read-only view of a snapshot's tree, or of the live state captured now when `snapshot` is omitted. */
  snapshotTree(snapshot?: WorkspaceSnapshot, options?: LongCallOptions): Promise<SnapshotTree> {
    return this.#audit.record(AUDITED.snapshotTree, undefined, undefined, () => this.#snapshots.tree(snapshot, options));
  }

  /** The git patch from `from` to `to` (the live state when omitted); see src/snapshots/patch.ts. */
  patch(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<string> {
    return this.#audit.record(AUDITED.patch, undefined, undefined, () => this.#snapshots.patch(from, to, options));
  }

  // ---- watching and lifetime --------------------------------------------------------------------------

  /** See {@link Workspace.watch}: the changes made through this workspace, reported by its watch layer. */
  watch(options?: WatchOptions): AsyncIterableIterator<WatchEvent> {
    return this.#watch.watch(options);
  }

  /** Releases the snapshots, then what the driver holds; ends every watcher; has the audit sinks hold every event. */
  async dispose(): Promise<void> {
    try {
      if (this.#disposed) return;
      this.#disposed = true;
      await this.#snapshots.dispose();
      await this.#driver.dispose?.();
    } finally {
      this.#watch.close();
      this.#audit.flush();
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}
