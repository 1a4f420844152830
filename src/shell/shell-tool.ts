import { Bash, type BashExecResult, type BashOptions } from 'just-bash';
import { z } from 'zod';
import { defineTool } from '../session/define-tool.js';
import type { Tool, ToolContext, ToolResult } from '../session/types.js';
import { failure, failureFromError, type ToolFailure } from '../tools/failure.js';
import { InvalidArgumentError, NotADirectoryError } from '../workspace/errors.js';
import { capOutput } from './output.js';
import { resolveShellPath, toWorkspacePath } from './shell-path.js';
import { ShellFsError } from './fs-errors.js';
import { WorkspaceFs } from './workspace-fs.js';

export interface ShellToolOptions {
  /** Most characters of stdout, and separately of stderr, a result carries (head and tail kept). Default 30,000. */
  maxOutputChars?: number;
  /** Deadline when a call gives no `timeout_ms`. Default 120,000 ms. */
  defaultTimeoutMs?: number;
  /** The most `timeout_ms` may ask for. Default 600,000 ms. */
  maxTimeoutMs?: number;
  /** just-bash's interpreter limits (loop iterations, command count, output size …), over its defaults. */
  executionLimits?: BashOptions['executionLimits'];
  /** Extra environment variables every command sees. */
  env?: Record<string, string>;
}

/** The `value` of a successful `bash` call. */
export interface ShellResult {
  exitCode: number;
  /** Capped at `maxOutputChars`, with a note in the middle saying how much was left out. */
  stdout: string;
  stderr: string;
  /** Workspace paths the command wrote, created, moved or deleted (a directory removed whole is listed once), sorted. */
  changed: string[];
}

export type ShellTool = Tool<z.ZodType, ShellResult | ToolFailure> & { name: 'bash' };

const DEFAULTS = { maxOutputChars: 30_000, defaultTimeoutMs: 120_000, maxTimeoutMs: 600_000 } as const;

/** just-bash exits 126 with a `bash: … exceeded` (or `too many …`) line when an interpreter limit stops a script. */
const LIMIT_LINE = /^bash: (.*(?:exceeded|too many|limit).*)$/m;
/** …and 124 with this line when its own clock (`maxExecutionTimeMs`) runs out. */
const DEADLINE_LINE = /^bash: execution exceeded execution deadline/m;

/**
 * A `bash` tool: commands run in just-bash (a bash interpreter written in TypeScript, no host process)
 * over the call's workspace, through the protocol, so snapshots, rollback, policy and the sandbox hold for
 * it as for the file tools. The workspace root is `/`; there is no network. A non-zero exit status is a
 * successful call (its result says the status); a deadline, an abort or an interpreter limit fails the
 * call, so `session.runTool` rolls it back.
 */
export function shellTool(options: ShellToolOptions = {}): ShellTool {
  const maxOutputChars = positive(options.maxOutputChars, DEFAULTS.maxOutputChars, 'maxOutputChars');
  const maxTimeoutMs = positive(options.maxTimeoutMs, DEFAULTS.maxTimeoutMs, 'maxTimeoutMs');
  const defaultTimeoutMs = Math.min(positive(options.defaultTimeoutMs, DEFAULTS.defaultTimeoutMs, 'defaultTimeoutMs'), maxTimeoutMs);

  return defineTool({
    name: 'bash',
    description:
      'Run a bash command line in the workspace (the workspace root is `/`). Common tools are built in: ls, cat, find, grep, sed, awk, ' +
      'head, tail, wc, sort, uniq, xargs, jq, diff, mkdir, mv, cp, rm, tar … Pipes, redirections, heredocs, loops and functions work. ' +
      'There is no network and no host program. Returns the exit code, stdout, stderr and the files changed; a non-zero exit code is ' +
      'a normal result. A command that passes its deadline is stopped and its changes are rolled back.',
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
        return await run(command, start, timeoutMs, context);
      } catch (error) {
        return failureFromError('bash', error, context.filesystem);
      }
    },
  }) as ShellTool;

  async function run(
    command: string,
    cwd: string,
    timeoutMs: number,
    context: ToolContext,
  ): Promise<ToolResult<ShellResult | ToolFailure>> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = context.signal === undefined ? deadline : AbortSignal.any([deadline, context.signal]);
    const fs = new WorkspaceFs(context.filesystem, { signal });
    const bash = new Bash({
      fs,
      cwd: '/',
      env: { HOME: '/', ...options.env },
      executionLimits: { maxOutputSize: 16 * 1024 * 1024, ...options.executionLimits, maxExecutionTimeMs: timeoutMs },
    });
    const result = await settle(bash.exec(command, { cwd, signal }), signal);
    if (context.signal?.aborted) return failure('EABORT', 'bash was aborted; its changes were rolled back.');
    if (deadline.aborted || result === undefined || (result.exitCode === 124 && DEADLINE_LINE.test(result.stderr))) {
      return failure(
        'ETIMEDOUT',
        `the command did not finish within ${timeoutMs} ms and was stopped; its changes were rolled back. ` +
          'Run a narrower command, or pass a larger timeout_ms.',
      );
    }
    if (fs.fatal.first !== undefined) return failureFromError('bash', fs.fatal.first, context.filesystem);
    const limit = result.exitCode === 126 ? LIMIT_LINE.exec(result.stderr) : null;
    if (limit !== null) {
      return failure(
        'ETOOL',
        `the command hit a shell limit (${limit[1]}); its changes were rolled back. Split the work into smaller commands.`,
        {
          reason: 'too_large',
        },
      );
    }
    const stdout = capOutput(result.stdout, maxOutputChars, 'stdout');
    const stderr = capOutput(result.stderr, maxOutputChars, 'stderr');
    const value: ShellResult = { exitCode: result.exitCode, stdout: stdout.text, stderr: stderr.text, changed: fs.changed() };
    return { success: true, message: describe(value), value };
  }
}

type ExecOutcome = Pick<BashExecResult, 'stdout' | 'stderr' | 'exitCode'>;

/**
 * The interpreter's result, or `undefined` when `signal` fires first: it stops at a statement boundary, and
 * a command still running is left behind (the workspace refuses what it tries next, see WorkspaceFs). A
 * filesystem error the interpreter lets escape (a redirection whose directory is missing) ends the command
 * line with status 1 and the error on stderr, as the failed redirection would in bash.
 */
async function settle(execution: Promise<BashExecResult>, signal: AbortSignal): Promise<ExecOutcome | undefined> {
  let stop: (() => void) | undefined;
  const stopped = new Promise<undefined>((resolveStop) => {
    stop = () => resolveStop(undefined);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  const outcome = execution.then(
    (result): ExecOutcome => result,
    (error: unknown): ExecOutcome => {
      if (error instanceof ShellFsError) return { stdout: '', stderr: `bash: ${error.message}\n`, exitCode: 1 };
      throw error;
    },
  );
  outcome.catch(() => undefined);
  try {
    return await Promise.race([outcome, stopped]);
  } finally {
    if (stop !== undefined) signal.removeEventListener('abort', stop);
  }
}

/** The text a model reads: the exit code, each non-empty stream, and what changed. */
function describe(result: ShellResult): string {
  const parts = [`Exit code: ${result.exitCode}`];
  if (result.stdout !== '') parts.push(`--- stdout ---\n${result.stdout.replace(/\n$/, '')}`);
  if (result.stderr !== '') parts.push(`--- stderr ---\n${result.stderr.replace(/\n$/, '')}`);
  if (result.stdout === '' && result.stderr === '') parts.push('(no output)');
  if (result.changed.length > 0) parts.push(`Changed: ${result.changed.join(', ')}`);
  return parts.join('\n');
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0)
    throw new InvalidArgumentError(`shellTool: ${name} must be a positive integer, got ${String(value)}`);
  return value;
}
