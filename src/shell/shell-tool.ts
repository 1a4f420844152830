import type { BashOptions } from 'just-bash';
import { z } from 'zod';
import { defineTool } from '../session/define-tool.js';
import type { Tool, ToolResult } from '../session/types.js';
import { failureFromError, type ToolFailure } from '../tools/failure.js';
import { InvalidArgumentError, NotADirectoryError } from '../workspace/errors.js';
import { DEFAULT_HOST_COMMANDS } from './command-policy.js';
import { hostShell, type HostShell } from './host-shell.js';
import { runInInterpreter } from './interpreter-shell.js';
import { runInSandbox } from './sandbox-shell.js';
import { shellSuccess, type ShellResult } from './output.js';
import { resolveShellPath, toWorkspacePath } from './shell-path.js';

export type { ShellResult } from './output.js';

export interface ShellToolOptions {
  /**
   * `interpreter` (default): just-bash over the workspace through the protocol, on every backend.
   * `host`: real processes in a host workspace's root (see docs/shell.md: not a security boundary).
   */
  mode?: 'interpreter' | 'host' | 'sandbox';
  /** Host mode: the programs a command line may run (replaces the default list). */
  allowedCommands?: readonly string[];
  /** Most characters of stdout, and separately of stderr, a result carries (head and tail kept). Default 30,000. */
  maxOutputChars?: number;
  /** Deadline when a call gives no `timeout_ms`. Default 120,000 ms. */
  defaultTimeoutMs?: number;
  /** The most `timeout_ms` may ask for. Default 600,000 ms. */
  maxTimeoutMs?: number;
  /** Interpreter mode: just-bash's limits (loop iterations, command count, output size …), over its defaults. */
  executionLimits?: BashOptions['executionLimits'];
  /** Extra environment variables every command sees. */
  env?: Record<string, string>;
}

export type ShellTool = Tool<z.ZodType, ShellResult | ToolFailure> & { name: 'bash' };

const DEFAULTS = { maxOutputChars: 30_000, defaultTimeoutMs: 120_000, maxTimeoutMs: 600_000 } as const;

const DESCRIPTIONS = {
  interpreter:
    'Run a bash command line in the workspace (the workspace root is `/`). Common tools are built in: ls, cat, find, grep, sed, awk, ' +
    'head, tail, wc, sort, uniq, xargs, jq, diff, mkdir, mv, cp, rm, tar … Pipes, redirections, heredocs, loops and functions work. ' +
    'There is no network and no host program.',
  host: 'Run a bash command line in the workspace root with real programs; only allowed programs can run',
  sandbox:
    'Run a bash command line with real programs (node, git, compilers, test runners, the system tools) in a sandbox whose ' +
    'working directory /workspace is the workspace. There is no network; /tmp is private and emptied after each call.',
} as const;

/**
 * A `bash` tool. By default commands run in just-bash (a bash interpreter written in TypeScript, no host
 * process) over the call's workspace, through the protocol, so snapshots, rollback, policy and the sandbox
 * hold for it as for the file tools; the workspace root is `/` and there is no network. A non-zero exit
 * status is a successful call (its result says the status); a deadline, an abort or a limit fails the call,
 * so `session.runTool` rolls it back.
 */
export function shellTool(options: ShellToolOptions = {}): ShellTool {
  const mode = options.mode ?? 'interpreter';
  if (mode !== 'interpreter' && mode !== 'host' && mode !== 'sandbox')
    throw new InvalidArgumentError(`shellTool: mode must be 'interpreter', 'host' or 'sandbox'`);
  const maxOutputChars = positive(options.maxOutputChars, DEFAULTS.maxOutputChars, 'maxOutputChars');
  const maxTimeoutMs = positive(options.maxTimeoutMs, DEFAULTS.maxTimeoutMs, 'maxTimeoutMs');
  const defaultTimeoutMs = Math.min(positive(options.defaultTimeoutMs, DEFAULTS.defaultTimeoutMs, 'defaultTimeoutMs'), maxTimeoutMs);
  const env = { ...options.env };
  const host: HostShell | undefined = mode === 'host' ? hostShell(options.allowedCommands ?? DEFAULT_HOST_COMMANDS, env) : undefined;
  const description =
    mode === 'host'
      ? `${DESCRIPTIONS.host} (${[...(options.allowedCommands ?? DEFAULT_HOST_COMMANDS)].join(', ')}, and bash builtins).`
      : DESCRIPTIONS[mode];

  return defineTool({
    name: 'bash',
    // Any command may overwrite or delete; host programs reach beyond the workspace (allow-listed, not a boundary).
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: mode === 'host' },
    description:
      `${description} Returns the exit code, stdout, stderr and the files changed; a non-zero exit code is a normal result. ` +
      'A command that passes its deadline is stopped and its changes are rolled back.',
    parameters: z.object({
      command: z.string().min(1).describe('The command line, as you would type it in bash.'),
      cwd: z.string().optional().describe("Directory to start in, relative to the workspace root. Default '/' (the root)."),
      timeout_ms: z
        .number()
        .int()
        .positive()
        .optional()
        .describe(`Deadline in milliseconds. Default ${defaultTimeoutMs}, at most ${maxTimeoutMs}.`),
    }),
    handler: async ({ command, cwd, timeout_ms }, context): Promise<ToolResult<ShellResult | ToolFailure>> => {
      try {
        const start = resolveShellPath('/', cwd ?? '/');
        const where = await context.filesystem.stat(toWorkspacePath(start));
        if (!where.isDirectory) throw new NotADirectoryError(where.path);
        const timeoutMs = Math.min(timeout_ms ?? defaultTimeoutMs, maxTimeoutMs);
        const outcome =
          mode === 'sandbox'
            ? await runInSandbox(command, start, timeoutMs, context, env)
            : host === undefined
              ? await runInInterpreter(command, start, timeoutMs, context, { executionLimits: options.executionLimits, env })
              : await host.run(command, start, timeoutMs, context);
        return 'success' in outcome ? outcome : shellSuccess(outcome, maxOutputChars);
      } catch (error) {
        return failureFromError('bash', error, context.filesystem);
      }
    },
  }) as ShellTool;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0)
    throw new InvalidArgumentError(`shellTool: ${name} must be a positive integer, got ${String(value)}`);
  return value;
}
