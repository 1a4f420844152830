import { parseArgs } from 'node:util';

export const USAGE = `Usage: sessionfs <command> [options]

Commands:
  demo                 Narrate a scripted agent session on the in-memory backend (what \`npm start\` runs).
  mcp                  Serve the workspace tool suite over MCP on stdio.

Options for mcp:
  --backend <kind>     memory (default) or host (a sandboxed temp directory with git snapshots).
  --mount <path>       Host directory or file to copy into the workspace (under its base name). Repeatable.
  --allow <root>       Host directory that mounts may come from. Repeatable; required with --mount.
  --read-only          Hydrate the mounts, then refuse every change.
  --read-before-write  Refuse write_file/edit_file on an existing file the model has not read.

General:
  -h, --help           Show this help.
  -v, --version        Show the version.
`;

export class UsageError extends Error {
  override name = 'UsageError';
}

export type Command =
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'demo' }
  | { command: 'mcp'; backend: 'memory' | 'host'; mounts: string[]; allow: string[]; readOnly: boolean; readBeforeWrite: boolean };

/** Parses the command line with `node:util` `parseArgs` (strict): an unknown flag or a bad value is a `UsageError`. */
export function parseCommandLine(argv: readonly string[]): Command {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { command: 'help' };
  if (values.version === true) return { command: 'version' };
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError('missing command: expected demo or mcp');
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  const mcpOnly = ['backend', 'mount', 'allow', 'read-only', 'read-before-write'] as const;
  switch (command) {
    case 'help':
      return { command: 'help' };
    case 'demo': {
      const misplaced = mcpOnly.find((name) => values[name] !== undefined);
      if (misplaced !== undefined) throw new UsageError(`--${misplaced} is an option of the mcp command, not of demo`);
      return { command: 'demo' };
    }
    case 'mcp': {
      const backend = values.backend ?? 'memory';
      if (backend !== 'memory' && backend !== 'host') throw new UsageError(`--backend must be memory or host, got ${JSON.stringify(backend)}`);
      const mounts = values.mount ?? [];
      const allow = values.allow ?? [];
      for (const [flag, list] of [['--mount', mounts], ['--allow', allow]] as const) {
        if (list.some((value) => value.trim() === '')) throw new UsageError(`${flag} needs a non-empty path`);
      }
      if (mounts.length > 0 && allow.length === 0) {
        throw new UsageError('--mount needs at least one --allow <root>: the host directories mounts may come from');
      }
      return { command: 'mcp', backend, mounts, allow, readOnly: values['read-only'] === true, readBeforeWrite: values['read-before-write'] === true };
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}: expected demo or mcp`);
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      backend: { type: 'string' },
      mount: { type: 'string', multiple: true },
      allow: { type: 'string', multiple: true },
      'read-only': { type: 'boolean' },
      'read-before-write': { type: 'boolean' },
    },
  });
}
