import * as fs from 'node:fs';
import { basename, dirname, join, resolve as resolveHostPath } from 'node:path';
import { InvalidArgumentError, SnapshotError, WorkspaceError } from '../../workspace/errors.js';
import { ChangeTracker } from './changes.js';
import { HostDriver, type HostResources } from './driver.js';
import { borrowGitDirs, copyRoot, removeOwnedGitDir, returnGitDirs, shareSnapshots } from './fork.js';
import { GitStore } from './git/store.js';
import { HostGitSnapshotter, type ChangeDetection } from './git-snapshotter.js';
import { excludeMatcher } from '../../host-files/names.js';
import { createOwnedTemp, removeOwnedTemp } from './owned-temp.js';
import { Sandbox } from '../../host-files/sandbox.js';
import { sweepStaleTempFiles } from './temp-files-sweep.js';

export type { ChangeDetection } from './git-snapshotter.js';

export interface HostDriverOptions {
  /** The directory to work in; created if missing, never deleted. Default: a fresh temp directory the driver owns. */
  root?: string;
  /** Where snapshot commits live; outside the root; created if missing, never deleted. Default: a fresh temp directory the driver owns. */
  gitDir?: string;
  /** Picomatch globs (`dot: true`) of paths snapshots leave out and restore never touches. */
  exclude?: readonly string[];
  /**
   * How a snapshot finds what changed. `scan` (default) compares every entry's stat data with what the last
   * snapshot recorded, so it is exact whoever writes the files. `tracked` trusts the workspace's own writes
   * plus `workspace.markChanged()` (which `hostExec` calls), and walks nothing.
   */
  changeDetection?: ChangeDetection;
}

const HOST_OPTIONS: readonly string[] = ['root', 'gitDir', 'exclude', 'changeDetection'];

/**
 * The host backend's driver over a real directory, sandboxed to it, with snapshots stored as commits in a
 * git repository outside it; `createWorkspace(hostDriver({ root }))` is a host workspace. Keep the driver
 * to read its instrumentation (`gitDir`, `tempFilesSwept`, `lastHashedCount`). See docs/backends.md, "The host backend".
 */
export function hostDriver(options: HostDriverOptions = {}): HostDriver {
  return buildDriver(openHost(options), []);
}

/** The driver over found or created locations; `borrowed` are the git dirs a fork borrows snapshot objects from. */
function buildDriver(host: HostLocations, borrowed: readonly string[]): HostDriver {
  const changes = new ChangeTracker();
  const sandbox = new Sandbox(host.root);
  let disposing = false;
  let startSweep: (readOnly: boolean) => void = () => undefined;
  // Started when a workspace is built on the driver (`attach`): a read-only one leaves a given root as it is.
  const swept: Promise<string[]> = host.ownsRoot
    ? Promise.resolve([])
    : new Promise((resolve) => {
        startSweep = (readOnly) => {
          startSweep = () => undefined;
          resolve(readOnly ? [] : sweepStaleTempFiles(sandbox, () => disposing).catch(() => []));
        };
      });
  const snapshotter = new HostGitSnapshotter(
    host.root,
    host.gitDir,
    host.changeDetection,
    changes,
    excludeMatcher(host.exclude),
    borrowed,
    host.ownsRoot ? undefined : swept,
  );
  const resources: HostResources = {
    gitDir: host.gitDir,
    changeDetection: host.changeDetection,
    exclude: host.exclude,
    tempFilesSwept: swept,
    lastHashedCount: () => snapshotter.lastHashedCount,
    attach: (readOnly) => startSweep(readOnly),
    fork: () => forkHost(host, borrowed),
    release: async () => {
      disposing = true;
      startSweep(true);
      await swept;
      if (host.ownsRoot) removeOwnedTemp(host.root);
      if (host.ownsGitDir) removeOwnedGitDir(host.gitDir);
      returnGitDirs(borrowed);
    },
  };
  return new HostDriver(sandbox, changes, snapshotter, resources);
}

/**
 * A new driver with the same content and history: a new root (a temp directory it owns) holding a copy of
 * this one (reflinked where the filesystem can), and a new git dir that borrows this one's snapshot objects
 * through git alternates, so every snapshot taken before the fork restores, diffs and patches in the fork
 * too. Snapshots taken afterwards belong to the side that took them. Same exclude and change detection.
 * Costs one copy of the root (no object is copied); the fork's first snapshot hashes its files once.
 */
async function forkHost(host: HostLocations, borrowedBefore: readonly string[]): Promise<HostDriver> {
  const root = createOwnedTemp('root');
  let gitDir: string | undefined;
  try {
    await copyRoot(host.root, root);
    gitDir = createOwnedTemp('git');
    GitStore.initSync(gitDir);
    shareSnapshots(host.gitDir, gitDir);
  } catch (error) {
    removeOwnedTemp(root);
    if (gitDir !== undefined) removeOwnedTemp(gitDir);
    if (error instanceof WorkspaceError) throw error;
    throw new SnapshotError(`cannot fork the workspace (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const borrowed = [host.gitDir, ...borrowedBefore];
  borrowGitDirs(borrowed);
  const forked = { ...host, root, gitDir, ownsRoot: true, ownsGitDir: true };
  return buildDriver(forked, borrowed);
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
function openHost(options: HostDriverOptions): HostLocations {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
  const unknown = Object.keys(options).filter((key) => !HOST_OPTIONS.includes(key));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `hostDriver does not take ${unknown.join(', ')} (its options: ${HOST_OPTIONS.join(', ')}; readOnly, limits, policy, audit and protect go to createWorkspace)`,
    );
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
