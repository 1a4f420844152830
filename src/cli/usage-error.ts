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
