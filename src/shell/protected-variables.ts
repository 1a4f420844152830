/**
 * Variables a host-shell command line may not set by any route: the ones that decide which program runs or
 * what bash and the dynamic loader load, and the hooks interpreters and tools run code from.
 */
const PROTECTED_NAMES: ReadonlySet<string> = new Set([
  // bash: the command search, startup files, options, prompts (PS4 is expanded by `set -x`)
  'PATH',
  'EXECIGNORE',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'CDPATH',
  'IFS',
  'HOME',
  'SHELL',
  'PS0',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'PROMPT_COMMAND',
  // the C library
  'GCONV_PATH',
  'GLIBC_TUNABLES',
  'LOCPATH',
  'NLSPATH',
  'HOSTALIASES',
  'RESOLV_HOST_CONF',
  // programs that run a command named in the environment, or read code or configuration from it
  'EDITOR',
  'VISUAL',
  'PAGER',
  'MANPAGER',
  'LESSOPEN',
  'LESSCLOSE',
  'BROWSER',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'NODE_OPTIONS',
  'NODE_PATH',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'XDG_CONFIG_HOME',
  'XDG_CONFIG_DIRS',
  'ZDOTDIR',
  'CONFIG_SITE',
]);

/** Every name with one of these prefixes: the loader (`LD_AUDIT`, `LD_DEBUG` …), bash's own, git's, interpreters'. */
const PROTECTED_PREFIXES: readonly string[] = ['LD_', 'DYLD_', 'BASH', 'GIT_', 'PYTHON', 'PERL', 'RUBY'];

/** Who made a commit, which scripts set; nothing runs from them. */
const ALLOWED: ReadonlySet<string> = new Set([
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
]);

export function isProtectedVariable(name: string): boolean {
  if (ALLOWED.has(name)) return false;
  return PROTECTED_NAMES.has(name) || PROTECTED_PREFIXES.some((prefix) => name.startsWith(prefix));
}
