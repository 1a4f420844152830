import type { WatchEvent, WatchOptions } from './watch-event.js';
import type { RestoreRetry } from './errors.js';
import type { WorkspaceLimits } from './limits.js';
import type { LongCallOptions, ProgressListener } from './progress.js';

/**
 * Which backend a workspace or snapshot belongs to: the driver's `name`. Open to third-party backends; the
 * built-in names are listed so that editors still suggest them.
 */
export type BackendKind = 'memory' | 'host' | (string & {});

export interface ReadOptions {
  /** 0-based first line. Default 0. */
  offset?: number;
  /** Most lines to return; `-1` for all. Default 2000. */
  limit?: number;
}

export interface ReadResult {
  path: string;
  /** The window's lines joined with `\n`, without a trailing newline. */
  content: string;
  /** Lines in the whole file, not counting the empty remainder after a final newline. */
  totalLines: number;
  offset: number;
  /** Lines returned. */
  limit: number;
  /** True when lines exist after the window. */
  truncated: boolean;
}

export interface ReadBytesOptions {
  offset?: number;
  /** Most bytes to return; omitted for all to the end. */
  limit?: number;
}

export interface ReadBytesResult {
  path: string;
  content: Uint8Array;
  /** Size of the whole file. */
  sizeBytes: number;
  offset: number;
  /** Bytes returned. */
  limit: number;
  truncated: boolean;
}

export type WriteMode = 'create' | 'overwrite' | 'append';

export interface WriteOptions {
  /** `create` fails when the path exists; `append` creates a missing file. Default `overwrite`. */
  mode?: WriteMode;
  /** Create missing parent directories. Default true. */
  createParents?: boolean;
  /** Stored by backends that keep metadata (memory); otherwise guessed from the extension. */
  mimeType?: string;
  /**
   * Compare-and-swap: write only when the file exists and its `stat().version` is this; otherwise throw
   * `ConflictError` (`ECONFLICT`) and change nothing. The check and the write are one step under the path's
   * lock. On a backend whose `stat()` has no `version`, every such write conflicts.
   */
  ifVersion?: number;
  /**
   * Sets (`true`) or clears (`false`) the file's executable bit (git's 100755 / 100644) with the write, in
   * one step. Omitted: a new file is not executable and an existing one keeps its bit. `true` on a backend
   * without executable bits is `NotSupportedError` (`ENOTSUP`).
   */
  executable?: boolean;
}

/** `createReadStream`: a byte range like Node's `fs.createReadStream` (`end` inclusive), and a way to stop. */
export interface ReadStreamOptions {
  /** First byte. Default 0. */
  start?: number;
  /** Last byte, inclusive. Default: the end of the file. */
  end?: number;
  /** Aborting errors the stream with `AbortError` and closes the file. */
  signal?: AbortSignal;
}

/**
 * `createWriteStream`: the options of `writeBytes`, applied when the stream closes (the commit). Not
 * bounded by `maxWriteBytes`; the policy's `maxFileBytes` and quotas apply (see docs/governance.md, "Streaming large files").
 */
export interface WriteStreamOptions extends WriteOptions {
  /** Aborting errors the stream with `AbortError` and discards what was staged (unless the commit began). */
  signal?: AbortSignal;
}

export interface WriteResult {
  path: string;
  /** Bytes this call wrote. */
  bytesWritten: number;
  mode: WriteMode;
}

export interface StatResult {
  path: string;
  isFile: boolean;
  isDirectory: boolean;
  /** True when the path itself is a symlink (stat follows it when it stays inside the root). */
  isSymlink: boolean;
  /**
   * A file whose executable bit is set (git's mode 100755); false for a directory, and on backends without
   * executable bits. Through a link: the target's.
   */
  executable: boolean;
  /** A symlink's target text as stored (the link is data: this is never resolved against the host). */
  linkTarget?: string;
  /** Bytes for a file; 0 for a directory. */
  sizeBytes: number;
  createdAt?: Date;
  modifiedAt?: Date;
  mimeType?: string;
  /**
   * Files: a whole number (below 2^53) that changes on every change of the file, made through the
   * workspace or, once detected, behind its back (a write, an append, a rename or copy onto it, a
   * restore), and never comes back for different contents (a restore may bring back the version those
   * very contents had). What `ifVersion` compares. Every backend built on `createWorkspace` has it.
   */
  version?: number;
}

export interface ListEntry {
  name: string;
  path: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
}

/** Bounds every glob and grep call takes: passing the deadline is `TimeoutError`, an abort `AbortError`. */
export interface SearchCallOptions {
  /** Deadline in milliseconds. Default the workspace's `limits.searchTimeoutMs` (10 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Skip what the workspace's `.gitignore` files ignore (nested ones too, git's precedence and negations)
   * and everything under a `.git` directory. Default false: orchestrators choose; the glob and grep tools
   * turn it on unless the model asks for `include_ignored`.
   */
  respectGitignore?: boolean;
  /** With `respectGitignore`: called, before the call resolves, with how many of the files it selected were ignored. */
  onIgnored?: (count: number) => void;
  /** Entries walked (phase `walk`), then, for grep, files searched (phase `search`); see `Progress`. */
  onProgress?: ProgressListener;
}

export interface GlobOptions extends SearchCallOptions {
  /** Base directory the pattern is relative to. Default the root. */
  path?: string;
  /** Let `*` and `**` match names starting with a dot. Default false. */
  dot?: boolean;
}

export interface GlobMatch {
  path: string;
  isFile: true;
}

export interface GrepOptions extends SearchCallOptions {
  path?: string;
  /** Only files matching this glob, relative to `path`, are searched. */
  glob?: string;
  /** Default 1000; `0` returns none. */
  maxMatches?: number;
  ignoreCase?: boolean;
}

export interface GrepMatch {
  path: string;
  /** 1-based. */
  lineNumber: number;
  /** The line without `\n` or a trailing `\r`. */
  lineContent: string;
  /** String (UTF-16) indices of the first match in `lineContent`. */
  matchStart: number;
  matchEnd: number;
}

export interface MkdirOptions {
  /** Create missing parents. Default true. */
  parents?: boolean;
  /** Succeed when the directory exists. Default true. */
  existOk?: boolean;
}

export interface DeleteOptions {
  recursive?: boolean;
}

export interface RenameOptions {
  /** Replace an existing target of the same kind (a directory target is replaced whole). Default false. */
  overwrite?: boolean;
}

export interface CopyOptions extends RenameOptions {
  /** Required to copy a directory. Default false. */
  recursive?: boolean;
}

/** One entry of a bulk write: a file with its bytes, or a directory to make. */
export type WriteFilesEntry =
  | {
      kind: 'file';
      path: string;
      /** The workspace may keep this buffer: do not change it after the call. */
      content: Uint8Array;
      /** Sets the executable bit (`NotSupportedError` on a backend without executable bits). Default false. */
      executable?: boolean;
    }
  | { kind: 'directory'; path: string }
  /** A symlink whose target text is `target`, replacing a file or link at the path (see {@link Workspace.symlink}). */
  | { kind: 'symlink'; path: string; target: string };

export interface WriteFilesResult {
  /** Files written and their bytes (directories not counted). */
  files: number;
  bytes: number;
  /** Entries not written because the backend reserves a name in their path, with the reason. */
  skipped: SkippedPath[];
}

/** The one protocol every backend implements. Every path is relative to the workspace root. */
export interface Workspace {
  readonly backend: BackendKind;
  /** `/` for memory; the real (symlink-resolved) directory for host. Never show it to a model. */
  readonly root: string;
  readonly readOnly: boolean;
  readonly limits: Readonly<WorkspaceLimits>;

  read(path: string, options?: ReadOptions): Promise<ReadResult>;
  readBytes(path: string, options?: ReadBytesOptions): Promise<ReadBytesResult>;
  write(path: string, content: string, options?: WriteOptions): Promise<WriteResult>;
  writeBytes(path: string, content: Uint8Array, options?: WriteOptions): Promise<WriteResult>;
  exists(path: string): Promise<boolean>;
  stat(path: string): Promise<StatResult>;
  list(path?: string): Promise<ListEntry[]>;
  glob(pattern: string, options?: GlobOptions): Promise<GlobMatch[]>;
  grep(pattern: string, options?: GrepOptions): Promise<GrepMatch[]>;
  mkdir(path: string, options?: MkdirOptions): Promise<void>;
  delete(path: string, options?: DeleteOptions): Promise<void>;
  rename(from: string, to: string, options?: RenameOptions): Promise<void>;
  copy(from: string, to: string, options?: CopyOptions): Promise<void>;
  /**
   * Sets or clears the executable bit of a file (through a link inside the workspace: of its target), as
   * `chmod +x` / `chmod -x` do for git. A directory is `IsADirectoryError` (`EISDIR`); a backend without
   * executable bits is `NotSupportedError` (`ENOTSUP`).
   */
  setExecutable(path: string, executable: boolean): Promise<void>;
  /**
   * Creates a symlink at `path` (which must not exist; its parents are created) whose target text is
   * `target`, stored as given: a relative target is read from the link's directory. Any target may be
   * stored, as git stores it, but reads follow a link only while it stays inside the workspace (an absolute
   * target never, on a backend without a host directory); a loop is `PathEscapeError` (`ELOOP`-like, code
   * `EACCES`). A backend without links is `NotSupportedError` (`ENOTSUP`).
   */
  symlink(target: string, path: string): Promise<void>;
  /** The target text of the symlink at `path` (`InvalidArgumentError` when it is not a link). */
  readlink(path: string): Promise<string>;
  /**
   * Optional bulk write, for hydration and imports: each file is written like `writeBytes(path, content,
   * { mode: 'overwrite', createParents: true })` and each directory made like `mkdir(path, { parents: true,
   * existOk: true })`, in order. Every path is checked (rules, limits, policy) before anything is written.
   * It stops at the first failure and throws it; what was written before stays (snapshot first to roll
   * back, as `hydrate` does). Every workspace built by `createWorkspace` has it.
   */
  writeFiles?(entries: readonly WriteFilesEntry[]): Promise<WriteFilesResult>;
  /**
   * The file's bytes (from `start` to `end`, inclusive) as a web stream, read in chunks. The file is opened
   * (and every check made) before the promise resolves: a missing file rejects with `FileNotFoundError`.
   */
  createReadStream(path: string, options?: ReadStreamOptions): Promise<ReadableStream<Uint8Array>>;
  /**
   * A web stream whose bytes become the file when it closes, atomically, as one `writeBytes` with these
   * options (policy, quota, `confirm`, `ifVersion`, audit, watch and locking as for a write). Before the
   * close the file is unchanged (or absent); an abort or an error leaves nothing behind.
   */
  createWriteStream(path: string, options?: WriteStreamOptions): Promise<WritableStream<Uint8Array>>;
}

/** `signal` and `onProgress`: see {@link LongCallOptions}. */
export interface SnapshotOptions extends LongCallOptions {
  tag?: string;
}

/** JSON-serialisable snapshot record; validated by `WorkspaceSnapshotSchema`. */
export interface WorkspaceSnapshot {
  id: string;
  backend: BackendKind;
  ref: string;
  /** ISO 8601. */
  createdAt: string;
  root: string;
  /** Host snapshots: the snapshot repository. */
  gitDir?: string;
  tag?: string;
  /** A third-party backend's own fields (JSON values). */
  meta?: Record<string, unknown>;
}

export interface SkippedPath {
  path: string;
  reason: string;
}

export interface RestoreResult {
  /** Entries restore left alone, e.g. a snapshot file where an excluded directory still stands (host). */
  skipped: SkippedPath[];
  /**
   * Attempts that failed because something else changed the root meanwhile (host: another process wrote
   * into a directory being removed, say), each retried; absent when the first attempt succeeded.
   */
  retries?: RestoreRetry[];
  /**
   * A real restore's check of what it did: the tree it left, hashed, against the snapshot's. Absent on a
   * dry run, and on a backend whose snapshots cannot be read as trees.
   */
  receipt?: RestoreReceipt;
  /** `dryRun: true`: what the restore would do (nothing was changed). */
  preview?: RestorePreview;
}

/** `restore` options: those of every long call, and `dryRun`. */
export interface RestoreOptions extends LongCallOptions {
  /** List what the restore would create, modify, delete and leave alone, changing nothing. Default false. */
  dryRun?: boolean;
}

/**
 * The workspace after a restore, checked: `treeHash` is git's tree id of the tree the restore left (see
 * docs/history.md, "Restore receipts"); `matches` says whether it is the snapshot's. False when the restore
 * left paths alone (protected paths, read-only mounts: what a dry run lists as `blocked`).
 */
export interface RestoreReceipt {
  treeHash: string;
  snapshotTreeHash: string;
  matches: boolean;
}

/** What a restore would do, by path (files, links and directories), sorted. */
export interface RestorePreview {
  created: string[];
  modified: string[];
  deleted: string[];
  /** Changes the restore would not make, and why (a protected path, a read-only mount, a read-only workspace). */
  blocked: SkippedPath[];
}

export type { RestoreRetry } from './errors.js';

export type DiffStatus = 'added' | 'modified' | 'deleted';

export interface DiffEntry {
  path: string;
  status: DiffStatus;
}

export interface SnapshotableWorkspace extends Workspace {
  snapshot(options?: SnapshotOptions): Promise<WorkspaceSnapshot>;
  /**
   * Makes the workspace hold exactly the snapshot. `signal` is honoured until the restore starts changing
   * files: an abort leaves the workspace exactly as before (`AbortError`) or, once changes began, the
   * restore completes and the workspace is exactly at the snapshot. Its result carries a `receipt`;
   * `dryRun: true` changes nothing and returns the `preview` instead (allowed on a read-only workspace).
   */
  restore(snapshot: WorkspaceSnapshot, options?: RestoreOptions): Promise<RestoreResult>;
  /** Files and symlinks that differ between `from` and `to` (the live state when omitted), sorted by path. */
  diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<DiffEntry[]>;
  /**
   * A git patch (`git diff --binary` format) that `git apply --binary` applies to the `from` tree to give
   * exactly the `to` tree's files and symlinks (the live state's when omitted). Deterministic.
   */
  patch(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<string>;
  /** A read-only view of a snapshot's tree, or of the live state captured now when `snapshot` is omitted. */
  snapshotTree(snapshot?: WorkspaceSnapshot, options?: LongCallOptions): Promise<SnapshotTree>;
  /**
   * Created, modified and deleted entries, as protocol operations and restores (rollbacks) change them,
   * under `path`, until `signal` aborts, the consumer stops or the workspace is disposed. A slow consumer
   * never blocks a writer: past `maxBuffered` events it loses events and gets one `overflow` event instead.
   */
  watch(options?: WatchOptions): AsyncIterableIterator<WatchEvent>;
  /** Makes the workspace read-only from now on (one way). Used to hydrate, then seal. */
  seal(): void;
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** One entry of a snapshot tree. A symlink's `bytes()` is its target text, as git stores it. */
export type SnapshotEntry =
  | { path: string; kind: 'file'; executable: boolean; bytes(): Promise<Uint8Array> }
  | { path: string; kind: 'symlink'; bytes(): Promise<Uint8Array> }
  | { path: string; kind: 'directory' };

/** A fixed tree: what a snapshot holds. Reading it never changes, whatever the workspace does meanwhile. */
export interface SnapshotTree {
  /** The entry at a normalised path (`''` is the root directory), links not followed; undefined when absent. */
  entry(path: string): Promise<SnapshotEntry | undefined>;
  /** Every entry below the root, each directory before what it holds. */
  entries(): AsyncIterable<SnapshotEntry>;
}
