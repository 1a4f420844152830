import { parseArgs } from 'node:util';
import { MCP_OPTIONS, MCP_USAGE, mcpCommand, shellModes, type McpCommand } from './mcp-args.js';
import { sessionsCommand, SESSIONS_OPTIONS, SESSIONS_USAGE, STORE_OPTIONS, type SessionsCommand } from './sessions-args.js';
import { INSPECT_USAGE, inspectCommand, type InspectCommand } from './inspect-args.js';
import { GENERAL_USAGE, SessionInUseError, UsageError } from './usage-error.js';

export type { MountArgument } from './mount-args.js';
export { MCP_USAGE, type McpCommand } from './mcp-args.js';

export const DEMO_USAGE = `Usage: sessionfs demo

Narrate a scripted agent session on the in-memory backend (what \`npm start\` runs): a generated project,
edits, a failed multi-file call rolled back, a refused escape, a snapshot and its diff.

${GENERAL_USAGE}`;

export const USAGE = `Usage: sessionfs <command> [options]

Commands:
  demo                 Narrate a scripted agent session on the in-memory backend (what \`npm start\` runs).
  mcp                  Serve the workspace tool suite over MCP on stdio.
  sessions             List, show, diff, export, write back, remove and collect stored sessions (mcp --session).
  inspect              Serve a local page with a stored session's history: turns, diffs, blame, restore, fork.
  help [command]       Show this help, or a command's.

Run 'sessionfs <command> --help' for a command's options.

${GENERAL_USAGE}`;

export { SessionInUseError, UsageError };

export type Command =
  { command: 'help'; usage: string } | { command: 'version' } | { command: 'demo' } | McpCommand | SessionsCommand | InspectCommand;

const COMMAND_USAGE: Record<string, string> = { mcp: MCP_USAGE, demo: DEMO_USAGE, sessions: SESSIONS_USAGE, inspect: INSPECT_USAGE };
const COMMANDS = 'demo, mcp, sessions or inspect';
const SESSIONS_ONLY = new Set(Object.keys(SESSIONS_OPTIONS));

/** Parses the command line with `node:util` `parseArgs` (strict): an unknown flag or a bad value is a `UsageError`. */
export function parseCommandLine(argv: readonly string[]): Command {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals, tokens } = parsed;
  const [command, ...rest] = positionals;
  if (values.help === true) return { command: 'help', usage: (command === undefined ? undefined : COMMAND_USAGE[command]) ?? USAGE };
  if (values.version === true) return { command: 'version' };
  if (command === undefined) throw new UsageError(`missing command: expected ${COMMANDS}`);
  if (command === 'help') {
    if (rest.length > 1) throw new UsageError(`unexpected argument ${JSON.stringify(rest[1])}`);
    const topic = rest[0];
    if (topic !== undefined && COMMAND_USAGE[topic] === undefined)
      throw new UsageError(`no help for ${JSON.stringify(topic)}: expected ${COMMANDS}`);
    return { command: 'help', usage: topic === undefined ? USAGE : COMMAND_USAGE[topic]! };
  }
  const given = [...new Set(tokens.flatMap((token) => (token.kind === 'option' ? [token.name] : [])))];
  if (command === 'sessions') return sessionsCommand(rest, values, given);
  if (command === 'inspect') return inspectCommand(rest, values, given);
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  switch (command) {
    case 'demo': {
      const misplaced = given[0];
      if (misplaced === undefined) return { command: 'demo' };
      if (Object.hasOwn(MCP_OPTIONS, misplaced) || Object.hasOwn(STORE_OPTIONS, misplaced))
        throw new UsageError(`--${misplaced} is an option of the mcp command, not of demo`);
      throw new UsageError(`--${misplaced} is not an option of demo`);
    }
    case 'mcp': {
      const misplaced = given.find((name) => SESSIONS_ONLY.has(name));
      if (misplaced !== undefined) throw new UsageError(`--${misplaced} is an option of the sessions command, not of mcp`);
      return mcpCommand(values, tokens);
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}: expected ${COMMANDS}`);
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: shellModes(argv),
    strict: true,
    allowPositionals: true,
    tokens: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      ...MCP_OPTIONS,
      ...STORE_OPTIONS,
      ...SESSIONS_OPTIONS,
    },
  });
}
