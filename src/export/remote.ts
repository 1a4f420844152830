import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitStore } from '../backends/host/git/store.js';
import { LongCall, type LongCallOptions } from '../workspace/progress.js';
import {
  AbortError,
  ConflictError,
  InvalidArgumentError,
  NotSupportedError,
  ReadOnlyError,
  SnapshotError,
  SnapshotRestoreError,
  TimeoutError,
} from '../workspace/errors.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { gitSnapshotTree } from '../backends/host/git/snapshot-tree.js';
import { Destination, type ExportDestination } from './destination.js';
import { applyExport, ExportIncompleteError, planExport, protectRulesOf, type ProtectedAt } from './export-plan.js';
import { trustOf } from '../governance/trust.js';
import { checkRemoteTree, writeSnapshotTree } from './remote-tree.js';
import { WorkspaceDestination } from './workspace-destination.js';

/** What every remote operation takes besides `signal` and `onProgress`. */
export interface RemoteOptions extends LongCallOptions {
  /**
   * The repository: a path (absolute, or relative with a `/` before any `:`), or a `file://`, `https://` or
   * `ssh://` URL. Anything else git could run (`fd::`, `ext::`, any `<transport>::`, `host:path`, `git://`,
   * `http://`, a leading `-`) is refused (`EINVAL`) before git runs.
   */
  remote: string;
  /**
   * The longest the git transfer may take, in milliseconds (default 300 000: five minutes). Past it the
   * git process and everything it started (ssh, a helper) are killed, the temporary repository removed,
   * and the call rejects with `TimeoutError` (`ETIMEDOUT`).
   */
  timeoutMs?: number;
}

/** `signal` and `onProgress`: see `LongCallOptions`. A push is honoured until `git push` starts. */
export interface PushOptions extends RemoteOptions {
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
export interface PullOptions extends RemoteOptions {
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
  const timeoutMs = checkTimeout(options.timeoutMs);
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
      const push = ['push', '--quiet', '--porcelain', remote, `${options.force === true ? '+' : ''}${commit}:${ref}`];
      const result = await git(gitDir, push, timeoutMs);
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
 * of it. Every workspace with file kinds gets files, exec bits, symlinks (any target, as data) and empty
 * directories exactly; a backend without them refuses a tree holding a link or an executable file
 * (`NotSupportedError`) and is left as it was. On a failure part way the workspace is restored to what it
 * held before.
 */
export async function pullSnapshot(workspace: SnapshotableWorkspace, options: PullOptions): Promise<WorkspaceSnapshot> {
  const remote = checkRemote(options?.remote);
  const ref = checkRef(options.ref);
  const timeoutMs = checkTimeout(options.timeoutMs);
  if (workspace.readOnly) throw new ReadOnlyError(undefined, 'the workspace is read-only: nothing can be pulled into it');
  const call = LongCall.start(options, 'pullSnapshot');
  return call.run(() =>
    withTempRepository(async (gitDir) => {
      const fetched = await git(gitDir, ['fetch', '--quiet', '--no-tags', remote, `+${ref}:refs/sessionfs/pulled`], timeoutMs);
      if (fetched.exitCode !== 0) throw new SnapshotRestoreError(`git fetch of ${ref} failed: ${lastLine(fetched.stderr, remote)}`);
      call.check();
      const store = new GitStore(gitDir);
      const commit = (await store.resolveRef('refs/sessionfs/pulled')) as string;
      const info = await store.readCommit(commit);
      if (info === undefined) throw new SnapshotRestoreError(`${ref} is not a commit`);
      await checkRemoteTree(store, info.tree);
      const pulled = gitSnapshotTree(store, info.tree);
      const host = isHost(workspace);
      const before = await workspace.snapshot({ tag: 'before pull', signal: call.forward.signal });
      try {
        const destination: ExportDestination = host ? new Destination(workspace.root) : new WorkspaceDestination(workspace);
        const plan = await planExport(
          await workspace.snapshotTree(before),
          pulled,
          [{ destination, place: (path) => path, anyLink: true }],
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
        if (error instanceof ExportIncompleteError && error.code === 'ENOTSUP')
          throw new NotSupportedError(
            `the ${workspace.backend} backend cannot hold ${error.path ?? 'an entry'} the remote tree has (a symlink or an executable file); nothing was pulled`,
            error.path,
          );
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

/** The URL schemes the docs name; a path is git's `file` protocol. */
const SCHEMES: ReadonlySet<string> = new Set(['file', 'https', 'ssh']);
/** What git reads as `<transport>::<address>`: a remote helper, which may run anything (`ext::`, `fd::`). */
const HELPER = /^[A-Za-z][A-Za-z0-9+.-]*::/;

function checkRemote(remote: unknown): string {
  const refuse = (why: string) => new InvalidArgumentError(`remote must be a repository path or a file://, https:// or ssh:// URL: ${why}`);
  if (typeof remote !== 'string' || remote === '') throw refuse('got no text');
  if ([...remote].some((char) => char < ' ' || char === '\x7f')) throw refuse('it holds a control character');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(remote)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (!SCHEMES.has(scheme)) throw refuse(`the ${scheme}:// transport is not allowed`);
    return remote;
  }
  if (remote.startsWith('-')) throw refuse('it starts with "-" (git would read an option)');
  if (HELPER.test(remote)) throw refuse(`the ${remote.slice(0, remote.indexOf('::'))}:: transport is not allowed`);
  const colon = remote.indexOf(':');
  // Git reads `host:path` (a colon before any slash) as ssh: write `ssh://host/path`, or `./name` for a path.
  if (colon >= 0 && !remote.slice(0, colon).includes('/')) throw refuse('"host:path" is not allowed (write ssh://host/path, or ./path)');
  return remote;
}

const DEFAULT_TIMEOUT_MS = 300_000;

function checkTimeout(timeoutMs: unknown): number {
  if (timeoutMs === undefined) return DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
    throw new InvalidArgumentError(`timeoutMs must be a positive whole number of milliseconds, got ${String(timeoutMs)}`);
  return timeoutMs;
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

/**
 * Runs git on the temporary repository, under a deadline. Git runs in a process group of its own, so that
 * at the deadline it and everything it started (ssh, a remote helper, a credential helper) are killed
 * together; the call then rejects with `TimeoutError`, and the caller's `finally` removes the repository.
 */
async function git(gitDir: string, args: string[], timeoutMs: number) {
  const { execa } = await import('execa');
  // No prompts: a transport that needs credentials fails instead of waiting for a terminal. Only the
  // protocols `checkRemote` lets through are allowed, whatever the user's configuration says (a path is
  // `file`); `ext::` is named again for a git too old to know GIT_ALLOW_PROTOCOL.
  const subprocess = execa('git', ['-c', 'protocol.ext.allow=never', '--git-dir', gitDir, ...args], {
    reject: false,
    env: { GIT_TERMINAL_PROMPT: '0', GIT_ALLOW_PROTOCOL: 'file:https:ssh' },
    stdin: 'ignore',
    detached: true,
    cleanup: true,
  });
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    killGroup(subprocess.pid);
  }, timeoutMs);
  const result = await subprocess.finally(() => clearTimeout(deadline));
  if (timedOut) throw new TimeoutError(`git ${args[0] ?? ''} did not finish within ${timeoutMs} ms; it was stopped (timeoutMs)`);
  return result;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
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
