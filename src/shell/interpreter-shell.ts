import type { BashExecResult, BashOptions } from 'just-bash';
import { lazyRequire } from '../workspace/lazy-require.js';
import type { ToolContext, ToolResult } from '../session/types.js';
import { failure, failureFromError, type ToolFailure } from '../tools/failure.js';
import { explainRefusals, refusalText, ShellFsError } from './fs-errors.js';
import type { ShellOutcome } from './output.js';
import { WorkspaceFs } from './workspace-fs.js';

/** The interpreter is loaded when a session first runs a command. */
const justBash = lazyRequire<typeof import('just-bash')>('just-bash');

export interface InterpreterSettings {
  executionLimits: BashOptions['executionLimits'];
  env: Readonly<Record<string, string>>;
}

/** just-bash exits 126 with a `bash: … exceeded` (or `too many …`) line when an interpreter limit stops a script. */
const LIMIT_LINE = /^bash: (.*(?:exceeded|too many|limit).*)$/m;
/**
 * …and 124 with one of these lines when its own clock (`maxExecutionTimeMs`) runs out or its signal aborts
 * it: for the whole script (`bash: execution exceeded execution deadline (…ms)`), for one command (`bash:
 * sleep exceeded its execution deadline`), or `bash: execution aborted`.
 */
const STOPPED_LINE = /^bash: (?:.* exceeded (?:its )?execution deadline|.*\baborted)\b/m;
/**
 * just-bash's own clock runs this long after ours. Its clock starts later and rounds to whole milliseconds,
 * so set to the same deadline it sometimes fired first and its "exit 124" passed for a command's own status.
 * Ours decides; its clock only stops a script that outlives ours.
 */
const INTERPRETER_GRACE_MS = 1_000;

/**
 * Runs a command line in just-bash over the call's workspace (see {@link WorkspaceFs}). A deadline, an
 * abort, an interpreter limit or an error that must not pass for a command's own failure (an internal
 * error, a workspace deadline) is a failed result, which the session rolls back.
 */
export async function runInInterpreter(
  command: string,
  cwd: string,
  timeoutMs: number,
  context: ToolContext,
  settings: InterpreterSettings,
): Promise<ToolResult<ToolFailure> | ShellOutcome> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = context.signal === undefined ? deadline : AbortSignal.any([deadline, context.signal]);
  const fs = new WorkspaceFs(context.filesystem, { signal });
  const bash = new (justBash().Bash)({
    fs,
    cwd: '/',
    env: { HOME: '/', ...settings.env },
    executionLimits: {
      maxOutputSize: 16 * 1024 * 1024,
      ...settings.executionLimits,
      maxExecutionTimeMs: timeoutMs + INTERPRETER_GRACE_MS,
    },
  });
  const result = await settle(bash.exec(command, { cwd, signal }), signal);
  if (context.signal?.aborted) return failure('ABORT_ERR', 'bash was aborted; its changes were rolled back.');
  // Whichever clock stopped the script, a stopped script is a failed call, never "exit 124, success".
  if (deadline.aborted || result === undefined || (result.exitCode === 124 && STOPPED_LINE.test(result.stderr))) {
    return timedOut(timeoutMs);
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
  return { exitCode: result.exitCode, stdout: result.stdout, stderr: explainRefusals(result.stderr, fs.refusals), changed: fs.changed() };
}

/** The failed result of a command stopped at its deadline (both shells). */
export function timedOut(timeoutMs: number): ToolResult<ToolFailure> {
  return failure(
    'ETIMEDOUT',
    `the command did not finish within ${timeoutMs} ms and was stopped; its changes were rolled back. ` +
      'Run a narrower command, or pass a larger timeout_ms.',
  );
}

type ExecOutcome = Pick<BashExecResult, 'stdout' | 'stderr' | 'exitCode'>;

/**
 * The interpreter's result, or `undefined` when `signal` fires first: it stops at a statement boundary, and
 * a command still running is left behind (the workspace refuses what it tries next, see WorkspaceFs). A
 * filesystem error the interpreter lets escape (a redirection whose directory is missing) ends the command
 * line with status 1 and the error on stderr.
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
      if (error instanceof ShellFsError) {
        return { stdout: '', stderr: `bash: ${error.path}: ${refusalText(error) ?? error.message}\n`, exitCode: 1 };
      }
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
