import { InvalidArgumentError } from './errors.js';
import type { LongCallOptions } from './progress.js';
import type { DiffEntry, RestoreResult, SnapshotOptions, SnapshotTree, StatResult, WorkspaceSnapshot, WriteMode } from './types.js';

/**
 * The open backend API: what a backend implements so that `createWorkspace(driver)` can build a full
 * `SnapshotableWorkspace` on it. The shared layer owns everything else (path rules, limits, errors,
 * locking, preconditions, glob and grep, snapshots by default); see docs/writing-a-backend.md.
 *
 * Every path a driver receives is already normalised and relative, with `''` for the root, checked against
 * the limits and the protocol's path rules. Before every call the shared layer checks the call's
 * preconditions with `kind()` (under a per-path lock for a mutation): `readFile`, `openFile` and `stat` get
 * an existing entry of the right kind, `mkdir` a missing path, and so on (docs/writing-a-backend.md lists
 * them; `strictDriver` in `sessionfs/testing` enforces them). Bytes cross the API as copies: those a driver
 * is given are its own, and those it returns may be its stored bytes. A driver error carrying a Node-style `code`
 * (`ENOENT`, `EEXIST`, `ENOTDIR`, `EISDIR`, `ENOTEMPTY`, `EACCES`, …) becomes the matching
 * `WorkspaceError`, with the workspace path and nothing of the driver's message.
 */
export interface BackendDriver {
  /** Shown as `workspace.backend` and in snapshot records: `'memory'`, `'host'`, `'s3'`, anything. */
  readonly name: string;
  /** What `workspace.root` shows; default `/`. A host directory for host-like drivers (never shown to a model). */
  readonly root?: string;

  /**
   * Bytes of a file from `offset` (at most `length` of them; to the end when omitted) and the whole file's
   * size. The path is a file, or a link to one inside the root. The bytes may be a view of what the driver
   * stores, provided it never changes them in place: the shared layer copies what a caller gets.
   */
  readFile(path: string, range: { offset: number; length?: number }): Promise<{ content: Uint8Array; sizeBytes: number }>;
  /**
   * Stores a file. The parent directory exists and the path is not a directory. `mode`: `create` (the path
   * was checked absent), `overwrite`, `append` (add to the existing bytes, or create). `bytes` are the
   * driver's own (the shared layer copied the caller's, and nobody changes them later): it may keep them.
   */
  writeFile(path: string, bytes: Uint8Array, options: DriverWriteOptions): Promise<void>;
  /** What the path is without following a final symlink; `undefined` when it does not exist. */
  kind(path: string): Promise<DriverEntryKind | undefined>;
  /**
   * Of an existing entry. Follows a symlink (one that leaves the driver's root must fail with `EACCES`); a dangling one (inside the
   * root) is reported as the link itself (`isSymlink`, neither file nor directory), not as `ENOENT`.
   */
  stat(path: string): Promise<DriverStat>;
  /** Children of a directory (or of a link to one), any order. */
  list(path: string): Promise<DriverListEntry[]>;
  /**
   * Every entry below directory `base` (not `base` itself; `base` is a directory), any order, never descending through a symlink.
   * The iterable may also offer `batches()` (see {@link BatchedWalk}): glob and grep then take the entries
   * a batch at a time, without an asynchronous step per entry.
   */
  walk(base: string): AsyncIterable<DriverWalkEntry>;
  /**
   * Optional (with `executable` in `writeFile`, `commitStaged` and `writeFiles`, `stat().executable`):
   * sets or clears the executable bit of an existing file (a link to one is followed inside the root).
   * Without it the workspace has no executable bits: every file reads as not executable, and asking for
   * one is `NotSupportedError`.
   */
  setExecutable?(path: string, executable: boolean): Promise<void>;
  /**
   * Optional (with `readlink`): creates a symlink whose target text is `target` at `path` (missing, its
   * parent a directory). The target is data: stored as given, never checked or resolved here. A driver
   * with links follows them in every other primitive only while they stay inside its root (`EACCES`
   * when one leaves it, `ELOOP` for too many hops): `resolveLinks` in sessionfs/workspace does that for a
   * driver that stores links as data. Without it the workspace has no links (`NotSupportedError`).
   */
  symlink?(target: string, path: string): Promise<void>;
  /** The target text of the symlink at `path` (the shared layer checked it is one). */
  readlink?(path: string): Promise<string>;
  /** Creates a directory (the path is missing, no file above it) and any missing parents. */
  mkdir(path: string): Promise<void>;
  /** Removes an existing file or symlink (never its target), or a directory: `recursive` with all it holds, else an empty one. */
  remove(path: string, options: { recursive: boolean }): Promise<void>;
  /**
   * Moves an entry (a symlink as a symlink) to `to`, whose parent exists. An existing `to` of the same kind
   * is replaced. Optional: the default copies, then removes the source.
   */
  move?(from: string, to: string): Promise<void>;
  /**
   * Copies an entry (a directory with everything in it) to `to`, whose parent exists; an existing `to` of
   * the same kind is replaced. Optional: the default reads and writes file by file (symlinks need their own).
   */
  copy?(from: string, to: string): Promise<void>;
  /**
   * Optional, for hydration at disk speed: writes many entries in one call, in order. A file is created or
   * replaced, its missing parents made (a file in the way fails with `ENOTDIR`, a directory at the path
   * with `EISDIR`), its execute bits set when `executable` and the driver keeps them; a directory is made
   * with its parents, an existing one kept. Stop at the first failure and throw it with a Node `code`
   * (set `error.path` to the entry's path to name it). The shared layer has checked every path and holds
   * their locks; without this method it writes entry by entry with `writeFile` and `mkdir`.
   */
  writeFiles?(entries: readonly DriverBulkEntry[]): Promise<void>;
  /**
   * Optional: why the driver keeps a name for itself (its temp files, say), or `undefined` for a name
   * anyone may use. A bulk write skips and reports paths holding such a name.
   */
  reservedName?(name: string): string | undefined;
  /**
   * Optional, for grep at disk speed: pins directory `path` (as `walk` spelled it) so that search workers
   * can read its files by name off the main thread, as `${pin.path}/${name}` opened without following a
   * final link. The driver vouches that the pinned directory lies inside its root for as long as the pin is
   * held; `undefined` (or no such method) means files are read with `readFile`.
   */
  pinSearchDirectory?(path: string): SearchDirectoryPin | undefined;
  /**
   * The real path an access to `path` reaches, links followed (a missing tail kept as given). Drivers with
   * symbolic links implement it, so that a policy judges what an access really reaches, not the link's name.
   */
  resolve?(path: string): Promise<string>;
  /**
   * Optional, with `resolve`: the same answer at once, for a driver that needs no I/O to give it (memory).
   * The policy and the `protect` rule then judge a path without a promise when no link is on it: the hot
   * path of every operation. May throw what `resolve` would reject with.
   */
  resolveNow?(path: string): string;
  /**
   * Optional, for read streams in constant memory: opens a file (links followed, as `readFile`) and keeps
   * reading that very file, whatever replaces the path meanwhile. Without it a stream reads ranges with
   * `readFile` and fails with `ConflictError` when the file's version changes in between.
   */
  openFile?(path: string): Promise<DriverFileHandle>;
  /**
   * Optional, with `commitStaged`, for write streams in constant memory: somewhere to put a file's bytes
   * as they arrive, invisible to every other call until committed. Without them a stream buffers in memory
   * and commits with `writeFile`.
   */
  stageFile?(path: string): Promise<DriverStagedFile>;
  /** Puts staged bytes at `path` as `writeFile` would put them (same preconditions, same modes), atomically. */
  commitStaged?(path: string, staged: DriverStagedFile, options: DriverWriteOptions): Promise<void>;
  /** The driver's own snapshots. Without it the shared layer keeps content-addressed snapshots of its own. */
  readonly snapshots?: Snapshotter;
  /**
   * Optional: an independent driver with the same content and the same snapshot history (every record
   * taken so far restores there too). `workspace.fork()` builds a workspace on it with the same options;
   * without it `workspace.fork()` is `NotSupportedError` (`ENOTSUP`).
   */
  fork?(): BackendDriver | Promise<BackendDriver>;
  /**
   * Optional: told that paths changed behind the protocol's back (another process wrote them; all of them
   * when `paths` is omitted), so the next snapshot sees them. `workspace.markChanged()` calls it; a driver
   * every change goes through needs none.
   */
  markChanged?(paths?: readonly string[]): void;
  /**
   * Optional: called once by `createWorkspace`, before any other call, with how the workspace starts
   * (a host driver starts its background clean-up of a given root only for a writable one).
   */
  attach?(workspace: { readonly readOnly: boolean }): void;
  /** Releases what the driver holds; called once by `workspace.dispose()`. */
  dispose?(): Promise<void>;
}

export type DriverEntryKind = 'file' | 'directory' | 'symlink';

/**
 * How `writeFile` stores: `mode` as for the protocol (`create` was checked absent); `executable` only
 * reaches a driver with `setExecutable` (set or clear the bit with the bytes; omitted: a new file is not
 * executable and an existing one keeps its bit).
 */
export interface DriverWriteOptions {
  mode: WriteMode;
  mimeType?: string;
  executable?: boolean;
}

/** An open file of {@link BackendDriver.openFile}. */
export interface DriverFileHandle {
  readonly sizeBytes: number;
  /**
   * Up to `length` bytes from `offset` (fewer at the end), the caller's own: a read stream hands them out
   * as they are (a fresh buffer read from disk is; a view of stored bytes is not, copy it).
   */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Bytes staged by {@link BackendDriver.stageFile}: appended in order, then committed or discarded once. */
export interface DriverStagedFile {
  write(chunk: Uint8Array): Promise<void>;
  /** Removes what was staged (nothing after a commit); safe to call more than once. */
  discard(): Promise<void>;
}

/** An entry of {@link BackendDriver.writeFiles}, its path normalised like every driver path. */
export type DriverBulkEntry =
  | { kind: 'file'; path: string; content: Uint8Array; executable: boolean }
  | { kind: 'directory'; path: string }
  /** Only for a driver with `symlink`: replaces a file or link at the path, as the other entries do. */
  | { kind: 'symlink'; path: string; target: string };

/** A directory held open for search workers to read files in; released once they are done. */
export interface SearchDirectoryPin {
  /** A host path naming that very directory (on Linux `/proc/<pid>/fd/<fd>`). */
  readonly path: string;
  release(): void;
}

/**
 * What a driver's `stat` reports: the public `StatResult` without the path. A driver that omits `version`
 * lets the shared layer derive one (see `withFallbackVersions`); one that gives it must keep the promise
 * `StatResult.version` states, with one clock for the whole driver (per-file write counters repeat a
 * number after a restore followed by a write).
 */
export type DriverStat = Omit<StatResult, 'path' | 'executable' | 'linkTarget'> & {
  /** A driver with `setExecutable` says whether the file is executable; absent means not. */
  executable?: boolean;
};

export interface DriverListEntry {
  name: string;
  kind: DriverEntryKind;
}

export interface DriverWalkEntry {
  /** Root-relative, normalised. */
  path: string;
  kind: DriverEntryKind;
}

/** A walk that can also hand over its entries in batches (the same entries, in the same order). */
export interface BatchedWalk extends AsyncIterable<DriverWalkEntry> {
  /**
   * `descend`, when given, is a hint: a directory it answers `false` for is reported but need not be listed
   * (nothing below it can match the search). A walk may list it anyway.
   */
  batches(descend?: (directory: string) => boolean): AsyncIterable<readonly DriverWalkEntry[]>;
}

/** Entries grouped when a walk has no batches of its own: at most this many wait for the next one. */
const WALK_BATCH = 256;

/**
 * A walk's entries a batch at a time: its own `batches()` when it offers them, else grouped here. A wrapper
 * that filters a walk (the policy's view) returns a plain iterable, so its filter is never skipped.
 */
export async function* walkBatches(
  walk: AsyncIterable<DriverWalkEntry>,
  descend?: (directory: string) => boolean,
): AsyncGenerator<readonly DriverWalkEntry[]> {
  if (typeof (walk as Partial<BatchedWalk>).batches === 'function') {
    yield* (walk as BatchedWalk).batches(descend);
    return;
  }
  let batch: DriverWalkEntry[] = [];
  for await (const entry of walk) {
    batch.push(entry);
    if (batch.length >= WALK_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * How a workspace takes, restores and compares snapshots. The shared layer validates records (zod) and
 * runs these calls one at a time; `restore` is only called on a writable workspace.
 *
 * Each call may get `signal` and `onProgress` (see `LongCallOptions`); the shared layer has already checked
 * the signal and sends the final progress event, so a snapshotter may ignore both. One that does long work
 * reports its units through `onProgress` and throws `signal.reason` between them once `signal` aborts;
 * a restore does so only before its first change.
 */
export interface Snapshotter {
  snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot>;
  /** Makes the workspace hold exactly the snapshot, or throws `SnapshotRestoreError` and changes nothing. */
  restore(snapshot: WorkspaceSnapshot, options?: LongCallOptions): Promise<RestoreResult>;
  /**
   * Optional: `restore`, leaving every path `leavesAlone` answers true for exactly as it is (not written,
   * not removed, not descended into), each differing one listed in `skipped`; `exists` says whether the
   * path is there now (asked on the way down, so a directory before what it holds). Without it the shared layer
   * restores and then puts such paths back (the `protect` rule: see docs/security-model.md).
   */
  restoreExcept?(
    snapshot: WorkspaceSnapshot,
    leavesAlone: (path: string, exists: boolean) => boolean,
    options?: LongCallOptions,
  ): Promise<RestoreResult>;
  /**
   * Optional: why `restore` leaves `path` as it is (a read-only mount of a composition, say), or undefined
   * when it restores it. What `restore(snapshot, { dryRun: true })` lists as `blocked`.
   */
  leftByRestore?(path: string): string | undefined;
  /** Files and symlinks that differ, sorted by path; `to` omitted compares with the live state. */
  diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<DiffEntry[]>;
  /**
   * A read-only view of a snapshot's tree, or of the live state captured now when `snapshot` is omitted
   * (what `patch`, `exportTo` and `pushSnapshot` read). Optional: without it those operations are refused.
   */
  open?(snapshot?: WorkspaceSnapshot, options?: LongCallOptions): Promise<SnapshotTree>;
  /** Told after every protocol mutation which paths it touched (written, created, removed, moved). */
  changed?(paths: readonly string[]): void;
  /**
   * Forgets these snapshots and frees what only they hold (a session's retention calls it); a later restore
   * of one is a `SnapshotRestoreError` naming it. Records it does not know are ignored. Optional: without
   * it, released records simply leave the session's lists.
   */
  release?(snapshots: readonly WorkspaceSnapshot[]): Promise<void>;
  dispose?(): Promise<void>;
}

/** Content-addressed storage for the default snapshotter: keys are the sha256 (hex) of the bytes. */
export interface BlobStore {
  /** The blob's bytes, the caller's own (a copy: never an array the store keeps, as a cache). */
  get(hash: string): Promise<Uint8Array | undefined>;
  /** Stores the bytes; once it resolves the caller may change `bytes` (keep a copy, never the array). */
  put(hash: string, bytes: Uint8Array): Promise<void>;
  has(hash: string): Promise<boolean>;
  delete?(hash: string): Promise<void>;
  list?(): AsyncIterable<string>;
}

export type { SnapshotEntry, SnapshotTree } from './types.js';

const REQUIRED_METHODS = ['readFile', 'writeFile', 'kind', 'stat', 'list', 'walk', 'mkdir', 'remove'] as const;

/** Refuses what cannot be a driver: no name, or a required primitive missing. */
export function assertDriver(driver: BackendDriver): void {
  if (driver === null || typeof driver !== 'object' || typeof driver.name !== 'string' || driver.name === '')
    throw new InvalidArgumentError('a backend driver needs a non-empty string name');
  for (const method of REQUIRED_METHODS) {
    if (typeof driver[method] !== 'function') throw new InvalidArgumentError(`backend driver ${driver.name} lacks ${method}()`);
  }
}
