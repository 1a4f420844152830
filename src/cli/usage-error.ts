/** The user's own mistake on the command line (a flag, a value): said on stderr with the values given, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The stored session a command names is open in another live process (its lease is held): exit 3, so a
 * script can tell "in use, try later" from a failure.
 */
export class SessionInUseError extends Error {
  override name = 'SessionInUseError';
}

/**
 * The session `sessionfs mcp` serves could not start: `reason` says why, host paths already replaced by
 * `<host path>` (the client's calls are answered with it, see mcp-start-failure.ts); exit 1.
 */
export class SessionStartError extends Error {
  override name = 'SessionStartError';
  constructor(readonly reason: string) {
    super(`could not start the session: ${reason}`);
  }
}

/** The help's last section: the flags every command takes, and what each exit status (these errors among them) means. */
export const GENERAL_USAGE = `General:
  -h, --help           Show this help (after a command: that command's help).
  -v, --version        Show the version.

Exit status: 0 done (mcp: the client disconnected or the process was told to stop); 1 the session could not
start or the command failed (mcp: a write-back conflict left, a patch not written); 2 a usage error
(unknown command or flag, a bad or missing value, a path a flag names that cannot be used); 3 the named
session is open in another live process (mcp --session, sessions rm).
`;
