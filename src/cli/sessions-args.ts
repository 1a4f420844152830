import type { ConflictPolicy } from '../export/export-plan.js';
import { sessionName, storeFlags, type StoreFlagValues, type StoreFlags } from './store-flags.js';
import { UsageError } from './usage-error.js';

/** The flags that name a store, shared by `mcp --session` and `sessions`. */
export const STORE_OPTIONS = {
  'store-dir': { type: 'string' },
  store: { type: 'string' },
  s3: { type: 'string' },
  's3-endpoint': { type: 'string' },
} as const;

/** The flags only `sessions` takes (`--patch-out` it shares with mcp). */
export const SESSIONS_OPTIONS = {
  json: { type: 'boolean' },
  stat: { type: 'boolean' },
  to: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'on-conflict': { type: 'string' },
  force: { type: 'boolean' },
  'grace-ms': { type: 'string' },
} as const;

export const STORE_USAGE = `Store (where named sessions live; the same for mcp --session and sessions):
  --store-dir <dir>    The local session store (default $XDG_STATE_HOME/sessionfs, else ~/.local/state/sessionfs).
  --store <url>        Keep heads and leases in Postgres instead (postgres://…); needs --s3.
  --s3 <s3://bucket/prefix>  Where --store keeps the contents (credentials and region from the AWS SDK's usual sources).
  --s3-endpoint <url>  An S3-compatible server (MinIO, R2, …) instead of AWS; path-style requests, region
                       us-east-1 unless AWS_REGION is set.`;

export const SESSIONS_USAGE = `Usage: sessionfs sessions <action> [NAME] [options]

Look at and manage the named sessions that \`sessionfs mcp --session NAME\` keeps.

Actions:
  list                 Every session: its version, when its head last moved, files and bytes, whether it is open.
  show NAME            One session: its head, where it began, files, lease and the published versions kept.
  diff NAME            What changed since the session began, as a unified diff (--stat: per file counts).
  export NAME --patch-out FILE
                       Write that change as a git patch (\`git apply --binary\` applies it) to FILE.
  write-back NAME --to DIR
                       Apply that change to the host directory DIR (created when missing). A file of DIR that
                       differs from where the session began is a conflict (--on-conflict fail|skip|overwrite,
                       default fail: nothing is written). --dry-run lists the plan and changes nothing.
  rm NAME              Delete the session (refused while it is open; --force deletes it anyway).
  gc                   Delete the stored contents no session reaches any more (unreachable for --grace-ms,
                       default 3600000: a server publishing right now may still need them).

Options:
  --json               Machine-readable output (list, show, diff, write-back, gc).
  --stat               diff: one line per file with its added and removed lines, then a summary.
  --patch-out <file>   export: where to write the patch (its directory must exist).
  --to <dir>           write-back: the host directory to apply the change to.
  --dry-run            write-back: list what would be written, deleted and in conflict; change nothing.
  --on-conflict <policy>  write-back: fail (default), skip or overwrite.
  --force              rm: delete a session even while a server has it open (that server can publish no more).
  --grace-ms <ms>      gc: how long contents must have been unreachable before they are deleted.

${STORE_USAGE}

Exit status: 0 done; 1 failed (no such session, a write-back conflict); 2 a usage error; 3 the session is
open in another process (rm without --force).
`;

export type SessionsAction =
  | { action: 'list'; json: boolean }
  | { action: 'show'; name: string; json: boolean }
  | { action: 'diff'; name: string; stat: boolean; json: boolean }
  | { action: 'export'; name: string; patchOut: string }
  | { action: 'write-back'; name: string; to: string; dryRun: boolean; onConflict: ConflictPolicy; json: boolean }
  | { action: 'rm'; name: string; force: boolean }
  | { action: 'gc'; graceMs: number; json: boolean };

export type SessionsCommand = { command: 'sessions'; store: StoreFlags } & SessionsAction;

type Values = StoreFlagValues & {
  [K in keyof typeof SESSIONS_OPTIONS]?: (typeof SESSIONS_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
} & {
  'patch-out'?: string;
};

/** The flags each action takes besides the store's. */
const TAKES: Record<SessionsAction['action'], readonly string[]> = {
  list: ['json'],
  show: ['json'],
  diff: ['stat', 'json'],
  export: ['patch-out'],
  'write-back': ['to', 'dry-run', 'on-conflict', 'json'],
  rm: ['force'],
  gc: ['grace-ms', 'json'],
};
const ACTIONS = Object.keys(TAKES).join(', ');

/**
 * `sessionfs sessions <action> [NAME]`: `given` are the flags the user gave (names, without `--`), `values`
 * their values. A flag the action does not take, a missing or extra NAME, a bad value: a `UsageError`.
 */
export function sessionsCommand(args: readonly string[], values: Values, given: readonly string[]): SessionsCommand {
  const [action, name, extra] = args;
  if (action === undefined) throw new UsageError(`sessions needs an action: ${ACTIONS}`);
  if (!Object.hasOwn(TAKES, action)) throw new UsageError(`unknown sessions action ${JSON.stringify(action)}: expected ${ACTIONS}`);
  const kind = action as SessionsAction['action'];
  const takes = new Set([...TAKES[kind], ...Object.keys(STORE_OPTIONS)]);
  const misplaced = given.find((flag) => !takes.has(flag));
  if (misplaced !== undefined) throw new UsageError(`--${misplaced} is not an option of sessions ${kind}`);
  const store = storeFlags(values);
  const named = kind !== 'list' && kind !== 'gc';
  if (named && name === undefined) throw new UsageError(`sessions ${kind} needs the session's NAME`);
  const surplus = named ? extra : name;
  if (surplus !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(surplus)}`);
  const json = values.json === true;
  const session = named ? sessionName(name as string, 'the session NAME') : '';
  switch (kind) {
    case 'list':
      return { command: 'sessions', store, action: kind, json };
    case 'show':
      return { command: 'sessions', store, action: kind, name: session, json };
    case 'diff':
      return { command: 'sessions', store, action: kind, name: session, stat: values.stat === true, json };
    case 'export': {
      const patchOut = values['patch-out'];
      if (patchOut === undefined || patchOut.trim() === '') throw new UsageError('sessions export needs --patch-out FILE');
      return { command: 'sessions', store, action: kind, name: session, patchOut };
    }
    case 'write-back': {
      const to = values.to;
      if (to === undefined || to.trim() === '') throw new UsageError('sessions write-back needs --to DIR');
      const onConflict = values['on-conflict'] ?? 'fail';
      if (onConflict !== 'fail' && onConflict !== 'skip' && onConflict !== 'overwrite')
        throw new UsageError(`--on-conflict must be fail, skip or overwrite, got ${JSON.stringify(onConflict)}`);
      return { command: 'sessions', store, action: kind, name: session, to, dryRun: values['dry-run'] === true, onConflict, json };
    }
    case 'rm':
      return { command: 'sessions', store, action: kind, name: session, force: values.force === true };
    case 'gc': {
      const grace = values['grace-ms'] ?? '3600000';
      if (!/^\d+$/.test(grace) || !Number.isSafeInteger(Number(grace)))
        throw new UsageError(`--grace-ms must be a whole number of milliseconds, got ${JSON.stringify(grace)}`);
      return { command: 'sessions', store, action: kind, graceMs: Number(grace), json };
    }
  }
}
