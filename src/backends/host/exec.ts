import type { Options as ExecaOptions, Result as ExecaResult } from 'execa';
import { InvalidArgumentError, NotSupportedError, ReadOnlyError } from '../../workspace/errors.js';

/** What `hostExec` needs of a workspace: a host one, as `createWorkspace(hostDriver(…))` builds. */
export interface ExecTarget {
  readonly backend: string;
  readonly root: string;
  readonly readOnly: boolean;
  markChanged(paths?: readonly string[]): void;
}

/**
 * Runs a command in a host workspace's root through execa (`cwd` is always the root) and has the next
 * snapshot scan, so `changeDetection: 'tracked'` stays exact when tools run commands. Refused on a read-only
 * workspace (a command may write) and on any other backend (there is no directory to run in).
 */
export async function hostExec(
  workspace: ExecTarget,
  command: string,
  args: readonly string[] = [],
  options: ExecaOptions = {},
): Promise<ExecaResult> {
  if (workspace?.backend !== 'host') throw new NotSupportedError('hostExec runs commands in a host workspace only');
  if (workspace.readOnly) throw new ReadOnlyError(undefined, 'the workspace is read-only: a command may write');
  if (typeof command !== 'string' || command === '') throw new InvalidArgumentError('command must be a non-empty string');
  workspace.markChanged();
  try {
    // Loaded on first use: most sessions run no command, and the CLI starts faster without it.
    const { execa } = await import('execa');
    return (await execa(command, [...args], { ...options, cwd: workspace.root })) as unknown as ExecaResult;
  } finally {
    workspace.markChanged();
  }
}
