import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { GitDirGate } from './git/gate.js';
import { GitStore } from './git/store.js';
import { pruneUnreachable, type PruneResult } from './git/prune.js';
import { diffTrees } from './git/tree-diff.js';
import type { Snapshotter, SnapshotTree } from '../../workspace/driver.js';
import { gitSnapshotTree } from './git/snapshot-tree.js';
import { SnapshotError, SnapshotRestoreError } from '../../workspace/errors.js';
import { LongCall, type LongCallOptions } from '../../workspace/progress.js';
import type { DiffEntry, RestoreResult, RestoreRetry, SnapshotOptions, WorkspaceSnapshot } from '../../workspace/types.js';
import type { ChangeTracker } from './changes.js';
import { TreeApplier } from './restore.js';
import { Sandbox } from '../../host-files/sandbox.js';
import { sweepStaleTempFilesIn } from './temp-files-sweep.js';
import { StatCache } from './stat-cache.js';

export type ChangeDetection = 'scan' | 'tracked';

const SNAPSHOT_TRAILER = 'sessionfs-snapshot';
const REF_PREFIX = 'refs/sessionfs/';
/** Failures another writer causes (a name filled, emptied or taken meanwhile): worth another attempt. */
const RACE_CODES = new Set(['ENOTEMPTY', 'EEXIST', 'EISDIR', 'ENOTDIR', 'ENOENT', 'EBUSY', 'ELOOP']);
const RESTORE_ATTEMPTS = 8;
const FIRST_RETRY_PAUSE_MS = 5;
const MAX_RETRY_PAUSE_MS = 200;
/** Snapshots released between two prunes (a prune walks every remaining snapshot's trees). */
const PRUNE_EVERY = 10;
/** Rounds of looking again at what the workspace changed during a scan (see `#settle`). */
const SETTLE_ROUNDS = 8;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Host snapshots: commits in a git repository outside the root, under `refs/sessionfs/<id>`. A record
 * belongs to any host workspace on the same git dir whose repository holds the ref as a snapshot commit.
 * The stat cache (`StatCache`) makes a snapshot cost what changed: `scan` compares every entry's stat
 * data, `tracked` looks only at the paths the driver touched (plus `markChanged`).
 */
export class HostGitSnapshotter implements Snapshotter {
  readonly #root: string;
  readonly #gitDir: string;
  readonly #changeDetection: ChangeDetection;
  readonly #store: GitStore;
  readonly #state: StatCache;
  readonly #changes: ChangeTracker;
  /** A fork's ancestors' git dirs: their records restore here when this repository holds their ref (copied at the fork). */
  readonly #inherited: readonly string[];
  /** Keeps prunes apart from snapshots, restores and diffs on this git dir, in every process (see GitDirGate). */
  readonly #gate: GitDirGate;
  readonly #sandbox: Sandbox;
  /**
   * The sweep of stale temp files the workspace started when it opened (a restore waits for it); none for
   * a root the workspace made itself, where no other process writes (nor does a restore look then).
   */
  readonly #openSweep: Promise<unknown> | undefined;
  #releasedSincePrune = 0;

  constructor(
    root: string,
    gitDir: string,
    changeDetection: ChangeDetection,
    changes: ChangeTracker,
    excluded: ((rel: string) => boolean) | undefined,
    inherited: readonly string[] = [],
    openSweep?: Promise<unknown>,
  ) {
    this.#root = root;
    this.#sandbox = new Sandbox(root);
    this.#openSweep = openSweep;
    this.#inherited = inherited;
    this.#gitDir = gitDir;
    this.#changeDetection = changeDetection;
    this.#changes = changes;
    this.#store = new GitStore(gitDir);
    this.#gate = new GitDirGate(gitDir);
    this.#state = new StatCache(root, this.#store, excluded);
  }

  /** Files hashed by the last snapshot, restore or live diff (instrumentation for tests and the bench). */
  get lastHashedCount(): number {
    return this.#state.hashed;
  }

  /**
   * Brings the stat cache up to date (a scan, or the dirty set in tracked mode) and writes the changed
   * blobs and trees. Everything new goes into one packfile per call: on the machine we measured, creating a
   * file costs ~0.6 ms, so one pack beats dozens of loose objects even for ten changed files. `extra`
   * adds objects (the commit) to the same pack; the caller moves a ref only after this returns.
   */
  async #capture<T>(extra: (tree: string) => T, call?: LongCall): Promise<T> {
    try {
      return await this.#captureOrThrow(extra, call);
    } catch (error) {
      if (call?.signal?.aborted === true) throw error;
      throw new SnapshotError(`cannot read the workspace or write its snapshot (${errorCode(error)})`);
    }
  }

  /**
   * `#capture`, throwing the host error itself (restore tells a race from a real failure by its code). With
   * a call, each entry examined is a unit of its `scan` phase, and the call's signal stops the scan there.
   */
  async #captureOrThrow<T>(extra: (tree: string) => T, call?: LongCall): Promise<T> {
    // Another workspace pruned this git dir: objects the cache names may be gone, so hash (and write) all again.
    if (this.#store.prunedSince()) this.#state.tree = undefined;
    const { dirty, fullScan } = this.#changes.take();
    this.#store.beginBatch();
    let result: T;
    try {
      await this.#state.observed(call === undefined ? undefined : (rel) => call.unit('scan', rel), async () => {
        const meanwhile = this.#changes.watch();
        try {
          if (this.#changeDetection === 'scan' || fullScan || this.#state.tree === undefined) await this.#state.scan(dirty);
          else await this.#state.refresh(dirty);
          await this.#settle(meanwhile);
        } finally {
          meanwhile.stop();
        }
      });
      call?.settle();
      result = extra(this.#state.buildTree());
      this.#store.endBatch();
    } catch (error) {
      let written = true;
      try {
        this.#store.endBatch();
      } catch {
        written = false; // already failing
      }
      // Stopped part way with every object written: the blob ids hold, only tree ids may be stale. Otherwise
      // the cache may name objects that were never written: hash everything again next time.
      if (written && call?.signal?.aborted === true) this.#state.forgetTrees();
      else this.#state.tree = undefined;
      this.#changes.giveBack(dirty);
      throw error;
    }
    return result;
  }

  /**
   * Looks again at the paths this workspace changed while the scan ran (its slices let them run between,
   * and a change's system calls run in the thread pool meanwhile), once those changes have ended: the tree
   * then holds each as it is after that change, never a file in neither of two listings. Rounds repeat while
   * changes keep coming during the previous one, up to SETTLE_ROUNDS.
   */
  async #settle(meanwhile: { take(): Set<string> }): Promise<void> {
    for (let round = 0; round < SETTLE_ROUNDS; round += 1) {
      await this.#changes.settled();
      const paths = meanwhile.take();
      if (paths.size === 0) return;
      const hashed = this.#state.hashed;
      await this.#state.refresh(paths);
      this.#state.hashed += hashed;
    }
  }

  async snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    return this.#gate.use(() => this.#snapshot(options));
  }

  async #snapshot(options: SnapshotOptions): Promise<WorkspaceSnapshot> {
    const tag = options.tag;
    const id = randomUUID();
    const createdAt = new Date();
    const message = `sessionfs snapshot\n\n${SNAPSHOT_TRAILER}: ${id}\n${tag === undefined ? '' : `sessionfs-tag: ${JSON.stringify(tag)}\n`}`;
    const ref = `${REF_PREFIX}${id}`;
    const commit = await this.#capture((tree) => this.#store.writeCommit(tree, message, createdAt), LongCall.start(options, 'snapshot'));
    try {
      // Objects first (the pack is on disk now), the ref last: a crash in between leaves only unreferenced objects.
      this.#store.writeRef(ref, commit);
    } catch (error) {
      throw new SnapshotError(`cannot write the snapshot commit (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const record: WorkspaceSnapshot = {
      id,
      backend: 'host',
      ref,
      createdAt: createdAt.toISOString(),
      root: this.#root,
      gitDir: this.#gitDir,
    };
    if (tag !== undefined) record.tag = tag;
    return record;
  }

  /** The snapshot tree a record names, after checking that it is a snapshot commit of this git dir. */
  async #treeOf(record: WorkspaceSnapshot): Promise<string> {
    const refuse = (why: string): never => {
      throw new SnapshotRestoreError(`snapshot ${String(record.id)} is not a snapshot of this workspace's git directory: ${why}`);
    };
    if (record.backend !== 'host') refuse('it belongs to another backend');
    if (record.gitDir === undefined || !this.#ownOrInherited(record.gitDir)) refuse('it was taken with another git directory');
    if (!UUID.test(record.id) || record.ref !== `${REF_PREFIX}${record.id}`) refuse('unknown ref');
    const commit = await this.#store.resolveRef(record.ref);
    if (commit === undefined)
      return refuse(
        'its ref does not exist (released: a session keeps only its newest snapshots, `retention.maxSnapshots`; or never taken here)',
      );
    const info = await this.#store.readCommit(commit);
    if (info === undefined || !info.message.includes(`\n${SNAPSHOT_TRAILER}: ${record.id}\n`))
      return refuse('the ref is not a snapshot commit');
    return info.tree;
  }

  /**
   * Whether a record's git dir is this one or one a fork inherited its history from. An ancestor's record
   * taken after the fork names a ref this repository does not hold, so it is still refused.
   */
  #ownOrInherited(candidate: string): boolean {
    const known = (dir: string): boolean => dir === this.#gitDir || this.#inherited.includes(dir);
    if (known(candidate)) return true;
    try {
      return known(fs.realpathSync(candidate));
    } catch {
      return false;
    }
  }

  /**
   * Makes the root hold exactly `snapshot`. Another process writing into the root can make an attempt fail
   * (`ENOTEMPTY`: a directory being removed was written into); the stat cache is then rescanned and the
   * apply retried, up to RESTORE_ATTEMPTS times with a growing pause. Other failures, or the last attempt's,
   * end as `SnapshotRestoreError` listing every attempt. Whatever happened, the cache is left so that the
   * next snapshot rescans the root and the next restore is exact (see `TreeApplier`).
   */
  async restore(snapshot: WorkspaceSnapshot, options?: LongCallOptions): Promise<RestoreResult> {
    const call = LongCall.start(options, 'restore');
    return this.#gate.use(() => this.#restore(snapshot, call));
  }

  /** `restore`, never touching the paths `leavesAlone` names (see `TreeApplier`). */
  async restoreExcept(
    snapshot: WorkspaceSnapshot,
    leavesAlone: (path: string, exists: boolean) => boolean,
    options?: LongCallOptions,
  ): Promise<RestoreResult> {
    const call = LongCall.start(options, 'restore');
    return this.#gate.use(() => this.#restore(snapshot, call, leavesAlone));
  }

  async #restore(
    snapshot: WorkspaceSnapshot,
    call: LongCall,
    leavesAlone?: (path: string, exists: boolean) => boolean,
  ): Promise<RestoreResult> {
    const tree = await this.#treeOf(snapshot);
    const retries: RestoreRetry[] = [];
    for (let attempt = 1; ; attempt += 1) {
      // Each entry written or removed is a unit of `apply`, past the point where the restore may stop.
      const applier = new TreeApplier(this.#root, this.#store, this.#state, (rel) => call.unit('apply', rel, true), leavesAlone);
      let stage = 'scan';
      try {
        call.check();
        await this.#captureOrThrow(() => undefined, call);
        call.check();
        stage = 'apply';
        await applier.apply(tree);
        await this.#removeStaleTempFiles(applier.visited);
        call.settle();
        if (applier.incomplete) this.#changes.mark();
        return retries.length === 0 ? { skipped: applier.skipped } : { skipped: applier.skipped, retries };
      } catch (error) {
        // Stopped before anything changed: the root is exactly as it was.
        if (stage === 'scan' && call.signal?.aborted === true) throw error;
        this.#changes.mark();
        retries.push({ code: errorCode(error), path: stage === 'scan' ? '' : applier.at });
        if (!RACE_CODES.has(errorCode(error)) || attempt === RESTORE_ATTEMPTS) {
          const tried = retries.map((r) => `${r.code} at ${r.path === '' ? 'the root' : `'${r.path}'`}`).join(', ');
          throw new SnapshotRestoreError(
            `restore failed after ${attempt} attempt${attempt === 1 ? '' : 's'} (${tried}); the root may be part way, the next snapshot rescans it and the next restore is exact`,
            { attempts: retries },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_RETRY_PAUSE_MS, FIRST_RETRY_PAUSE_MS * 2 ** (attempt - 1))));
      }
    }
  }

  /**
   * After an apply: the temp files of writers that were killed (a restore or write of another process, on
   * this root) go too, so a restore leaves exactly the snapshot. Looked for where the apply went and where
   * the scan before it saw temp names, not by a walk of the whole root; the sweep this workspace started
   * when it opened (the whole root) is waited for first. Best effort: a failure here fails nothing.
   */
  async #removeStaleTempFiles(visited: readonly string[]): Promise<void> {
    if (this.#openSweep === undefined) return;
    await this.#openSweep;
    const dirs = [...this.#state.tempNameDirs, ...visited];
    this.#state.tempNameDirs.clear();
    await sweepStaleTempFilesIn(this.#sandbox, dirs).catch(() => []);
  }

  /**
   * Drops the refs of these snapshots (records of other git dirs, or not snapshots, are ignored) and, once
   * PRUNE_EVERY were dropped since the last prune, removes the objects nothing reaches any more (see
   * `pruneUnreachable`: it walks every remaining snapshot's trees, so it runs in batches, not per release).
   */
  async release(snapshots: readonly WorkspaceSnapshot[]): Promise<void> {
    for (const record of snapshots) {
      if (record.backend !== 'host' || record.gitDir === undefined || !this.#ownOrInherited(record.gitDir)) continue;
      if (!UUID.test(record.id) || record.ref !== `${REF_PREFIX}${record.id}`) continue;
      this.#store.deleteRef(record.ref);
      this.#releasedSincePrune += 1;
    }
    if (this.#releasedSincePrune >= PRUNE_EVERY) await this.prune();
  }

  /**
   * Removes every object no snapshot ref reaches and the stat cache does not name; skipped (`skipped: true`,
   * tried again at the next release) while a snapshot, restore or diff of any process uses the git dir.
   */
  async prune(): Promise<PruneResult> {
    const result = await this.#gate.prune(() => {
      this.#releasedSincePrune = 0;
      return pruneUnreachable(this.#store, this.#state.objectIds());
    });
    return result ?? { looseRemoved: 0, packsRemoved: 0, skipped: true };
  }

  async open(snapshot?: WorkspaceSnapshot, options?: LongCallOptions): Promise<SnapshotTree> {
    return this.#gate.use(async () => {
      const tree =
        snapshot === undefined
          ? await this.#capture((live) => live, LongCall.start(options, 'snapshotTree'))
          : await this.#treeOf(snapshot);
      return gitSnapshotTree(this.#store, tree);
    });
  }

  async diff(from: WorkspaceSnapshot, to?: WorkspaceSnapshot, options?: LongCallOptions): Promise<DiffEntry[]> {
    return this.#gate.use(async () => {
      const left = await this.#treeOf(from);
      const right = to === undefined ? await this.#capture((tree) => tree, LongCall.start(options, 'diff')) : await this.#treeOf(to);
      return diffTrees(this.#store, left, right);
    });
  }
}

function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'error';
}
