import * as fs from 'node:fs';
import { basename, dirname, join, resolve as resolveHostPath } from 'node:path';
import type { Options as ExecaOptions, Result as ExecaResult } from 'execa';
import { validatePolicy } from '../../governance/policy.js';
import { validateProtect } from '../../governance/protect.js';
import { GitStore } from './git/store.js';
import { DriverWorkspace, type CreateWorkspaceOptions } from '../../workspace/create-workspace.js';
import { InvalidArgumentError, SnapshotError, WorkspaceError } from '../../workspace/errors.js';
import { resolveLimits } from '../../workspace/limits.js';
import { ChangeTracker } from './changes.js';
import { HostDriver } from './driver.js';
import { HostGitSnapshotter, type ChangeDetection } from './git-snapshotter.js';
import { excludeMatcher } from './names.js';
import { borrowGitDirs, copyRoot, removeOwnedGitDir, returnGitDirs, shareSnapshots } from './fork.js';
import { createOwnedTemp, removeOwnedTemp } from './owned-temp.js';
import { Sandbox } from './sandbox.js';
import { sweepStaleTempFiles } from './temp-files-sweep.js';

export type { ChangeDetection } from './git-snapshotter.js';

export interface HostWorkspaceOptions extends Pick<CreateWorkspaceOptions, 'readOnly' | 'limits' | 'policy' | 'audit' | 'protect'> {
  /** The directory to work in; created if missing, never deleted. Default: a fresh temp directory the workspace owns. */
  root?: string;
  /** Where snapshot commits live; outside the root; created if missing, never deleted. Default: a fresh temp directory the workspace owns. */
  gitDir?: string;
  /** Picomatch globs (`dot: true`) of paths snapshots leave out and restore never touches. */
  exclude?: string[];
  /**
   * How a snapshot finds what changed. `scan` (default) compares every entry's stat data with what the last
   * snapshot recorded, so it is exact whoever writes the files. `tracked` trusts the workspace's own writes
   * plus `markChanged()` and `exec()`, and walks nothing.
   */
  changeDetection?: ChangeDetection;
}

/**
 * A workspace over a real directory, sandboxed to it, with snapshots stored as commits in a git repository
 * outside it: the shared layer over a {@link HostDriver} and a {@link HostGitSnapshotter}. See
 * docs/host-backend.md for the guarantees and the measured costs.
 */
export class HostWorkspace extends DriverWorkspace {
  declare readonly backend: 'host';
  /** The real path of the snapshot repository. */
  readonly gitDir: string;
  readonly changeDetection: ChangeDetection;
  readonly exclude: readonly string[];
  readonly #changes: ChangeTracker;
  readonly #snapshotter: HostGitSnapshotter;

  /**
   * The sweep a workspace on a given root starts when it opens (in the background, not on a read-only
   * workspace): temp files of atomic writes left by writers killed mid-write (`kill -9`) are removed,
   * never a live writer's (see docs/reliability.md). Resolves with the workspace paths removed; never rejects.
   */
  readonly tempFilesSwept: Promise<string[]>;

  /** The git dirs whose snapshot objects this workspace borrows (a fork's parent's, and what that one borrows). */
  readonly #borrowed: readonly string[];

  /** `forked` is how {@link fork} hands over the root and git dir it made; callers leave it out. */
  constructor(options: HostWorkspaceOptions = {}, forked?: ForkedLocations) {
    const host = forked === undefined ? openHost(options) : forkedHost(options, forked);
    const borrowed = forked?.borrowed ?? [];
    const changes = new ChangeTracker();
    const sandbox = new Sandbox(host.root);
    let disposing = false;
    const swept =
      host.ownsRoot || options.readOnly === true ? Promise.resolve([]) : sweepStaleTempFiles(sandbox, () => disposing).catch(() => []);
    const snapshotter = new HostGitSnapshotter(
      host.root,
      host.gitDir,
      host.changeDetection,
      changes,
      excludeMatcher(host.exclude),
      borrowed,
      host.ownsRoot ? undefined : swept,
    );
    const driver = new HostDriver(sandbox, changes, snapshotter, async () => {
      disposing = true;
      await swept;
      if (host.ownsRoot) removeOwnedTemp(host.root);
      if (host.ownsGitDir) removeOwnedGitDir(host.gitDir);
      returnGitDirs(borrowed);
    });
    super(driver, options);
    this.gitDir = host.gitDir;
    this.changeDetection = host.changeDetection;
    this.exclude = host.exclude;
    this.#changes = changes;
    this.#snapshotter = snapshotter;
    this.#borrowed = borrowed;
    this.tempFilesSwept = swept;
  }

  /**
   * An independent workspace with the same content and history: a new root (a temp directory it owns)
   * holding a copy of this one (reflinked where the filesystem can), and a new git dir that borrows this
   * one's snapshot objects through git alternates, so every snapshot this workspace took before the fork
   * restores, diffs and patches in the fork too. Snapshots taken afterwards belong to the side that took them.
   * Same limits, policy, exclude, change detection and read-only state. Costs one copy of the root (no
   * object is copied); the fork's first snapshot hashes its files once. Writes made while the copy runs
   * may or may not be in the fork (run it between operations, as `session.fork()` does).
   */
  async fork(): Promise<HostWorkspace> {
    this.admit('read');
    const root = createOwnedTemp('root');
    let gitDir: string | undefined;
    try {
      await copyRoot(this.root, root);
      gitDir = createOwnedTemp('git');
      GitStore.initSync(gitDir);
      shareSnapshots(this.gitDir, gitDir);
    } catch (error) {
      removeOwnedTemp(root);
      if (gitDir !== undefined) removeOwnedTemp(gitDir);
      if (error instanceof WorkspaceError) throw error;
      throw new SnapshotError(`cannot fork the workspace (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const borrowed = [this.gitDir, ...this.#borrowed];
    borrowGitDirs(borrowed);
    const options: HostWorkspaceOptions = {
      exclude: [...this.exclude],
      changeDetection: this.changeDetection,
      limits: this.limits,
      readOnly: this.readOnly,
      protect: this.protect,
      ...(this.policy === undefined ? {} : { policy: this.policy }),
    };
    return new HostWorkspace(options, { root, gitDir, borrowed });
  }

  /**
   * Tells a `tracked` workspace that paths changed behind its back (another process wrote them). Without
   * an argument the next snapshot scans everything. Harmless (and unneeded) in `scan` mode.
   */
  markChanged(paths?: readonly string[]): void {
    this.#changes.mark(paths);
  }

  /**
   * Runs a command in the root through execa (`cwd` is always the root) and makes the next snapshot scan,
   * so `tracked` stays exact when tools run commands. Refused on a read-only workspace: a command may write.
   */
  async exec(command: string, args: readonly string[] = [], options: ExecaOptions = {}): Promise<ExecaResult> {
    this.admit('write');
    if (typeof command !== 'string' || command === '') throw new InvalidArgumentError('command must be a non-empty string');
    this.#changes.mark();
    try {
      // Loaded on first use: most sessions run no command, and the CLI starts faster without it.
      const { execa } = await import('execa');
      return (await execa(command, [...args], { ...options, cwd: this.root })) as unknown as ExecaResult;
    } finally {
      this.#changes.mark();
    }
  }

  /** Files hashed by the last snapshot, restore or live diff (instrumentation for tests and the bench). */
  get lastHashedCount(): number {
    return this.#snapshotter.lastHashedCount;
  }
}

/** What {@link HostWorkspace.fork} made: an owned root and git dir, and the git dirs the fork borrows objects from. */
interface ForkedLocations {
  root: string;
  gitDir: string;
  borrowed: readonly string[];
}

function forkedHost(options: HostWorkspaceOptions, forked: ForkedLocations): HostLocations {
  return {
    root: forked.root,
    gitDir: forked.gitDir,
    ownsRoot: true,
    ownsGitDir: true,
    changeDetection: options.changeDetection ?? 'scan',
    exclude: Object.freeze([...(options.exclude ?? [])]),
  };
}

interface HostLocations {
  root: string;
  gitDir: string;
  ownsRoot: boolean;
  ownsGitDir: boolean;
  changeDetection: ChangeDetection;
  exclude: readonly string[];
}

/** Checks every option, then finds or creates the root and the git dir (a refusal leaves nothing behind). */
function openHost(options: HostWorkspaceOptions): HostLocations {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
  resolveLimits(options.limits);
  if (options.policy !== undefined) validatePolicy(options.policy);
  validateProtect(options.protect);
  const changeDetection = options.changeDetection ?? 'scan';
  if (changeDetection !== 'scan' && changeDetection !== 'tracked')
    throw new InvalidArgumentError(`changeDetection must be 'scan' or 'tracked', got ${String(changeDetection)}`);
  const exclude = options.exclude ?? [];
  if (!Array.isArray(exclude) || exclude.some((g) => typeof g !== 'string' || g === ''))
    throw new InvalidArgumentError('exclude must be a list of non-empty glob strings');
  for (const [name, value] of [
    ['root', options.root],
    ['gitDir', options.gitDir],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '' || value.includes('\0')))
      throw new InvalidArgumentError(`${name} must be a non-empty path string`);
  }

  // Work out both locations before creating anything, so a refusal leaves nothing behind.
  const givenRoot = options.root === undefined ? undefined : realish(resolveHostPath(options.root));
  const givenGitDir = options.gitDir === undefined ? undefined : realish(resolveHostPath(options.gitDir));
  if (givenRoot !== undefined && givenGitDir !== undefined && isInside(givenGitDir, givenRoot)) {
    throw new InvalidArgumentError('gitDir must lie outside the workspace root');
  }
  if (givenGitDir !== undefined && !GitStore.isUsableDir(givenGitDir))
    throw new InvalidArgumentError('gitDir exists and is neither empty nor a git repository');

  let root: string;
  try {
    if (givenRoot === undefined) root = createOwnedTemp('root');
    else {
      fs.mkdirSync(givenRoot, { recursive: true });
      root = fs.realpathSync(givenRoot);
      if (!fs.statSync(root).isDirectory()) throw new InvalidArgumentError('root is not a directory');
    }
  } catch (error) {
    if (error instanceof WorkspaceError) throw error;
    throw new InvalidArgumentError(`cannot create or open the workspace root (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let gitDir: string;
  try {
    if (givenGitDir === undefined) gitDir = createOwnedTemp('git');
    else {
      fs.mkdirSync(givenGitDir, { recursive: true });
      gitDir = fs.realpathSync(givenGitDir);
    }
    if (isInside(gitDir, root)) throw new InvalidArgumentError('gitDir must lie outside the workspace root');
    GitStore.initSync(gitDir);
  } catch (error) {
    if (givenRoot === undefined) removeOwnedTemp(root);
    if (error instanceof WorkspaceError) throw error;
    throw new InvalidArgumentError(
      `cannot create or open the snapshot git directory (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return {
    root,
    gitDir,
    ownsRoot: givenRoot === undefined,
    ownsGitDir: givenGitDir === undefined,
    changeDetection,
    exclude: Object.freeze([...exclude]),
  };
}

/** Real path of `path`, resolving the longest existing prefix (the rest may not exist yet). */
function realish(path: string): string {
  try {
    return fs.realpathSync(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(realish(parent), basename(path));
  }
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}
