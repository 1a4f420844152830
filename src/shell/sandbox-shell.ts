import type { ToolContext } from '../session/types.js';
import type { ShellOutcome } from './output.js';
import { toWorkspacePath } from './shell-path.js';

/**
 * The `bash` tool's sandbox mode: real bash through `session.exec` (docs/programs.md), on any backend. The
 * program's changes are applied in this call (its rollback undoes them); a deadline, an abort or a limit
 * throws, which the tool turns into a failed call. The network is never given to a model's command.
 */
export async function runInSandbox(
  command: string,
  cwd: string,
  timeoutMs: number,
  context: ToolContext,
  env: Readonly<Record<string, string>>,
): Promise<ShellOutcome> {
  const result = await context.session.exec(command, {
    cwd: toWorkspacePath(cwd),
    timeoutMs,
    env: { ...env },
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
  const { created, modified, deleted } = result.changed;
  return {
    exitCode: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    changed: [...new Set([...created, ...modified, ...deleted])].sort(),
  };
}
