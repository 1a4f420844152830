import { STORE_OPTIONS, STORE_USAGE } from './sessions-args.js';
import { sessionName, storeFlags, type StoreFlagValues, type StoreFlags } from './store-flags.js';
import { UsageError } from './usage-error.js';

export const INSPECT_USAGE = `Usage: sessionfs inspect [--session NAME] [store options]

Serve a local page to look at stored sessions (what \`sessionfs mcp --session NAME\` keeps): the timeline of
turns and calls, each call's diff side by side, blame for a file, and restore (after its dry-run preview),
fork and export patch. It listens on 127.0.0.1 on a random port and prints the page's URL, which holds a
random token: every request without it, or from another origin, is refused. Stop it with Ctrl-C.

A session a running server holds can be looked at while it runs; a restore needs the session's lease, so
it is refused until that server stops (fork to a new name instead: that needs no lease).

Options:
  --session <name>     Open this session (default: the page lists the store's sessions).

${STORE_USAGE}
`;

export interface InspectCommand {
  command: 'inspect';
  store: StoreFlags;
  session?: string;
}

/** `sessionfs inspect`: `given` are the flags the user gave; any but `--session` and the store's is a usage error. */
export function inspectCommand(
  args: readonly string[],
  values: StoreFlagValues & { session?: string },
  given: readonly string[],
): InspectCommand {
  if (args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args[0])}`);
  const misplaced = given.find((flag) => flag !== 'session' && !Object.hasOwn(STORE_OPTIONS, flag));
  if (misplaced !== undefined) throw new UsageError(`--${misplaced} is not an option of inspect`);
  const store = storeFlags(values);
  return { command: 'inspect', store, ...(values.session === undefined ? {} : { session: sessionName(values.session, '--session') }) };
}
