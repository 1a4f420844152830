import { tmpdir } from 'node:os';
import { unguardedWorkspace } from '../session/call-view.js';
import { scrubHostPaths } from '../session/scrub.js';
import type { ToolContext, ToolResult } from '../session/types.js';
import { failure, type ToolFailure } from '../tools/failure.js';
import { InvalidArgumentError, ReadOnlyError } from '../workspace/errors.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { allowedPathDirectory, findExecutable, locatePrograms } from './allowed-path.js';
import { checkCommandLine } from './command-policy.js';
import { refuseProtectedChanges } from './protected-changes.js';
import { timedOut } from './interpreter-shell.js';
import { toWorkspacePath } from './shell-path.js';
import type { ShellOutcome } from './output.js';

/** A host workspace: `markChanged()` makes the next snapshot scan the whole root. */
interface HostLikeWorkspace extends SnapshotableWorkspace {
  markChanged(paths?: readonly string[]): void;
}

export interface HostShell {
  run(command: string, cwd: string, timeoutMs: number, context: ToolContext): Promise<ToolResult<ToolFailure> | ShellOutcome>;
}

/** Bytes either stream may reach before the process is stopped and the call fails. */
const MAX_BUFFER = 16 * 1024 * 1024;

/**
 * Real processes in a host workspace's root: `bash -c` with a scrubbed environment whose PATH holds only the
 * allowed programs, each command line checked first (see `checkCommandLine`), a deadline that kills the
 * whole process group, and the workspace marked for a full scan so the snapshot after it is exact. Not a
 * security boundary: it runs real programs with the user's rights, and an allowed program can do anything
 * the user can.
 */
export function hostShell(allowedCommands: readonly string[], env: Readonly<Record<string, string>>): HostShell {
  for (const name of allowedCommands) {
    if (typeof name !== 'string' || !/^[\w.+-]+$/.test(name) || name === '.' || name === '..') {
      throw new InvalidArgumentError(`allowedCommands: ${JSON.stringify(name)} is not a program name`);
    }
  }
  const bash = findExecutable('bash');
  if (bash === undefined) throw new InvalidArgumentError("shell: 'host' needs bash on the PATH");
  const allowed = new Set(allowedCommands);
  let programs: Map<string, string> | undefined;

  return {
    async run(command, cwd, timeoutMs, context) {
      const workspace = context.filesystem;
      // Marking is not a write, and must still happen after an abort has closed the call's view.
      const marker = unguardedWorkspace(workspace) as Partial<HostLikeWorkspace>;
      if (workspace.backend !== 'host' || typeof marker.markChanged !== 'function') {
        return failure('EINVAL', 'the host shell runs only on a host workspace; use the default shell (shell: true) on this one.');
      }
      if (workspace.readOnly)
        throw new ReadOnlyError(undefined, 'the workspace is read-only, so the host shell (which may write) cannot run');
      checkCommandLine(command, allowed);
      programs ??= locatePrograms(allowedCommands);
      const before = context.session.snapshots.at(-1);
      const at = toWorkspacePath(cwd);
      const script = at === '' ? command : `cd -- '${at.replace(/'/g, `'\\''`)}' || exit 1\n${command}`;
      // Marked before and after: a write the scan of a snapshot taken meanwhile missed is found by the next one.
      const markChanged = () => marker.markChanged?.();
      markChanged();
      const { execa } = await import('execa');
      const pathDir = allowedPathDirectory(programs);
      const subprocess = execa(bash, ['--noprofile', '--norc', '-c', script], {
        cwd: workspace.root,
        env: { LANG: 'C.UTF-8', TERM: 'dumb', ...env, HOME: workspace.root, PATH: pathDir.path },
        extendEnv: false,
        timeout: timeoutMs,
        ...(context.signal === undefined ? {} : { cancelSignal: context.signal }),
        forceKillAfterDelay: 1_000,
        detached: true,
        cleanup: true,
        reject: false,
        stdin: 'ignore',
        stripFinalNewline: false,
        maxBuffer: MAX_BUFFER,
      });
      // On an abort the session restores the snapshot as soon as the handler's protocol calls settle: the
      // group is killed at once (SIGKILL), not when execa gets round to it.
      const onAbort = () => killGroup(subprocess.pid);
      context.signal?.addEventListener('abort', onAbort, { once: true });
      const result = await subprocess.finally(() => {
        context.signal?.removeEventListener('abort', onAbort);
        killGroup(subprocess.pid);
        pathDir.remove();
        markChanged();
      });
      if (context.signal?.aborted === true || result.isCanceled)
        return failure('ABORT_ERR', 'bash was aborted; its changes were rolled back.');
      if (result.timedOut) return timedOut(timeoutMs);
      if (result.isMaxBuffer) {
        return failure('ETOOL', `the command wrote more than ${MAX_BUFFER} bytes of output; its changes were rolled back.`, {
          reason: 'too_large',
        });
      }
      const hide = (text: unknown) => scrubHostPaths(String(text ?? ''), { root: workspace.root, hostDirs: [pathDir.path, tmpdir()] });
      const changed = before === undefined ? [] : (await workspace.diff(before)).map((entry) => entry.path);
      if (before !== undefined) await refuseProtectedChanges(marker as SnapshotableWorkspace, workspace, before, changed);
      return {
        exitCode: result.exitCode ?? 128 + signalNumber(result.signal),
        stdout: hide(result.stdout),
        stderr: hide(result.stderr),
        changed,
      };
    },
  };
}

/** What the command left running in the background goes with it. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

const SIGNALS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGPIPE: 13, SIGTERM: 15 };

function signalNumber(signal: string | undefined): number {
  return signal === undefined ? 0 : (SIGNALS[signal] ?? 0);
}
