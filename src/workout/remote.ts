import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitStore } from '../backends/host/git/store.js';
import type { SnapshotTree } from '../workspace/driver.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';
import {
  AbortError,
  ConflictError,
  InvalidArgumentError,
  ReadOnlyError,
  SnapshotError,
  SnapshotRestoreError,
} from '../workspace/errors.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { gitSnapshotTree } from './backend-trees.js';
import { Destination, type ExportDestination } from './destination.js';
import { applyExport, planExport, protectRulesOf, type ProtectedAt } from './export-plan.js';
import { trustOf } from '../governance/trust.js';
import { checkRemoteTree, writeSnapshotTree } from './remote-tree.js';
import { WorkspaceDestination } from './workspace-destination.js';

/** `signal` and `onProgress`: see `LongCallOptions`. A push is honoured until `git push` starts. */
export interface PushOptions extends LongCallOptions {
  /** A bare repository path or any URL native git accepts. */
  remote: string;
  /**
   * The ref to write, a full name under `refs/`. Default: `refs/sessionfs/sessions/<session>/<snapshot id>`
   * when `session` is given, else `refs/sessionfs/snapshots/<snapshot id>`.
   */
  ref?: string;
  /**
   * The session the snapshot belongs to (usually `session.id`): its refs are kept apart from every other
   * session's under `refs/sessionfs/sessions/<session>/` (the id escaped to a valid ref component).
   */
  session?: string;
  /** Replace the ref when the remote already has it. Default false: a `ConflictError`. */
  force?: boolean;
}

export interface PushResult {
  remote: string;
  ref: string;
  commit: string;
}

/** `signal` and `onProgress` (phases `plan`, `write`): an abort leaves the workspace as it was. */
export interface PullOptions extends LongCallOptions {
  remote: string;
  ref: string;
}

/**
 * Stores a snapshot of any backend as a git commit on a remote, with native git for the transport. The
 * tree is built the way host snapshots are (names escaped, empty directories kept as a `%` entry; see
 * git-names.ts), so files, exec bits, symlinks and empty directories all survive; the commit has no parent
 * and the snapshot's time, so the same snapshot always gives the same commit.
 */
export async function pushSnapshot(
  workspace: SnapshotableWorkspace,
  snapshot: WorkspaceSnapshot,
  options: PushOptions,
): Promise<PushResult> {
  const remote = checkRemote(options?.remote);
  const ref = checkRef(options.ref ?? defaultRef(snapshot, options.session));
  const call = LongCall.start(options, 'pushSnapshot');
  return call.run(async () => {
    const tree = await workspace.snapshotTree(snapshot, { signal: call.forward.signal });
    return withTempRepository(async (gitDir) => {
      const store = new GitStore(gitDir);
      store.beginBatch();
      const root = await writeSnapshotTree(store, tree, call);
      const trailer = `sessionfs-snapshot: ${snapshot.id}\n${snapshot.tag === undefined ? '' : `sessionfs-tag: ${JSON.stringify(snapshot.tag)}\n`}`;
      const commit = store.writeCommit(root, `sessionfs snapshot\n\n${trailer}`, new Date(snapshot.createdAt));
      store.endBatch();
      call.check(); // the last point where nothing has reached the remote
      call.report({ phase: 'push', done: call.done });
      const result = await git(gitDir, ['push', '--quiet', '--porcelain', remote, `${options.force === true ? '+' : ''}${commit}:${ref}`]);
      if (result.exitCode !== 0) {
        if (/\[rejected\]|non-fast-forward|already exists|fetch first/.test(result.stdout + result.stderr))
          throw new ConflictError(`the remote already has ${ref} (pass force: true to replace it)`);
        throw new SnapshotError(`git push failed: ${lastLine(result.stderr, remote)}`);
      }
      return { remote, ref, commit };
    });
  });
}

/**
 * Makes `workspace` hold exactly the tree of the commit at `ref` on `remote`, then returns a new snapshot
 * of it. A host workspace gets files, exec bits, symlinks and empty directories exactly; a backend without
 * symlinks refuses a tree holding one (InvalidArgumentError) before changing anything. On a failure part way
 * the workspace is restored to what it held before.
 */
export async function pullSnapshot(workspace: SnapshotableWorkspace, options: PullOptions): Promise<WorkspaceSnapshot> {
  const remote = checkRemote(options?.remote);
  const ref = checkRef(options.ref);
  if (workspace.readOnly) throw new ReadOnlyError(undefined, 'the workspace is read-only: nothing can be pulled into it');
  const call = LongCall.start(options, 'pullSnapshot');
  return call.run(() =>
    withTempRepository(async (gitDir) => {
      const fetched = await git(gitDir, ['fetch', '--quiet', '--no-tags', remote, `+${ref}:refs/sessionfs/pulled`]);
      if (fetched.exitCode !== 0) throw new SnapshotRestoreError(`git fetch of ${ref} failed: ${lastLine(fetched.stderr, remote)}`);
      call.check();
      const store = new GitStore(gitDir);
      const commit = (await store.resolveRef('refs/sessionfs/pulled')) as string;
      const info = await store.readCommit(commit);
      if (info === undefined) throw new SnapshotRestoreError(`${ref} is not a commit`);
      await checkRemoteTree(store, info.tree);
      const pulled = gitSnapshotTree(store, info.tree);
      const host = isHost(workspace);
      if (!host) await refuseSymlinks(pulled, workspace.backend);
      const before = await workspace.snapshot({ tag: 'before pull', signal: call.forward.signal });
      try {
        const destination: ExportDestination = host ? new Destination(workspace.root) : new WorkspaceDestination(workspace);
        const plan = await planExport(
          await workspace.snapshotTree(before),
          pulled,
          [{ destination, place: (path) => path }],
          'overwrite',
          call,
          protectedInPull(workspace, destination),
        );
        await applyExport(plan, { dryRun: false, policy: 'overwrite', call });
      } catch (error) {
        if (host) workspace.markChanged();
        await workspace.restore(before);
        // Restored: nothing of the pull is left, so an abort part way is a plain abort.
        if (call.signal?.aborted === true) throw new AbortError('pullSnapshot was aborted');
        throw error;
      } finally {
        if (host) workspace.markChanged();
      }
      return workspace.snapshot({ tag: `pulled ${ref}` });
    }),
  );
}

/** A host workspace: its root is written directly (links and exec bits), then told what changed. */
type HostLike = SnapshotableWorkspace & { markChanged(): void };

function isHost(workspace: SnapshotableWorkspace): workspace is HostLike {
  return workspace.backend === 'host' && typeof (workspace as Partial<HostLike>).markChanged === 'function';
}

async function refuseSymlinks(tree: SnapshotTree, backend: string): Promise<void> {
  for await (const entry of tree.entries()) {
    if (entry.kind === 'symlink')
      throw new InvalidArgumentError(`the ${backend} backend cannot hold the symlink ${entry.path} the remote tree has`, entry.path);
  }
}

/** The default ref of a pushed snapshot; a session id becomes one ref component (`%XX` for other bytes). */
export function defaultRef(snapshot: WorkspaceSnapshot, session?: string): string {
  const id = refComponent(snapshot.id);
  if (session === undefined) return `refs/sessionfs/snapshots/${id}`;
  if (typeof session !== 'string') throw new InvalidArgumentError('session must be a string');
  return `refs/sessionfs/sessions/${refComponent(session)}/${id}`;
}

function refComponent(text: string): string {
  const escaped = [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9_-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
  return escaped === '' ? '%' : escaped;
}

function checkRemote(remote: unknown): string {
  if (typeof remote !== 'string' || remote === '' || remote.includes('\0') || remote.startsWith('-'))
    throw new InvalidArgumentError('remote must be a repository path or URL (not starting with "-")');
  return remote;
}

function checkRef(ref: unknown): string {
  if (
    typeof ref !== 'string' ||
    !/^refs\/[A-Za-z0-9._%/-]+$/.test(ref) ||
    ref.includes('..') ||
    ref.includes('/.') ||
    ref.endsWith('/') ||
    ref.endsWith('.lock') ||
    ref.includes('//')
  )
    throw new InvalidArgumentError(
      `ref must be a full git ref name under refs/ (letters, digits, '.', '_', '-', '/'), got ${JSON.stringify(ref)}`,
    );
  return ref;
}

async function withTempRepository<T>(task: (gitDir: string) => Promise<T>): Promise<T> {
  const gitDir = await mkdtemp(join(tmpdir(), 'sessionfs-remote-'));
  try {
    GitStore.initSync(gitDir);
    return await task(gitDir);
  } finally {
    await rm(gitDir, { recursive: true, force: true });
  }
}

async function git(gitDir: string, args: string[]) {
  const { execa } = await import('execa');
  // No prompts: a transport that needs credentials fails instead of waiting for a terminal. The `ext::`
  // transport runs a command line; it is refused whatever the user's configuration says.
  return execa('git', ['-c', 'protocol.ext.allow=never', '--git-dir', gitDir, ...args], {
    reject: false,
    env: { GIT_TERMINAL_PROMPT: '0' },
    stdin: 'ignore',
  });
}

/** Git's last line of complaint, with the remote (a host path or URL that may hold credentials) left out. */
function lastLine(text: string, remote: string): string {
  return (text.trim().split('\n').pop() ?? 'unknown error').split(remote).join('<remote>');
}

/**
 * What a pull leaves alone, as a restore does: a protected root the host provided (present at the
 * destination and not the workspace's own). A protected root the pull creates becomes the workspace's own.
 */
function protectedInPull(workspace: SnapshotableWorkspace, destination: ExportDestination): ProtectedAt {
  const protection = trustOf(workspace)?.protection;
  if (protection === undefined) return protectRulesOf(workspace);
  return async (rel) => {
    const found = protection.rules.rootOf(rel);
    if (found === undefined || !protection.leavesAlone(rel)) return undefined;
    return protection.leavesAlone(found.root, (await destination.state(found.root)).kind !== 'missing') ? found : undefined;
  };
}
