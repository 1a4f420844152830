import { lazyRequire } from '../workspace/lazy-require.js';
import { InvalidArgumentError, PolicyError } from '../workspace/errors.js';
import { checkExpansions } from './expansion-policy.js';
import { forEachNode, literalWord } from './shell-words.js';
import { checkVariables } from './variable-policy.js';

const justBash = lazyRequire<typeof import('just-bash')>('just-bash');

/** What the host shell runs when `allowedCommands` is not given: text and file tools, and git. */
export const DEFAULT_HOST_COMMANDS: readonly string[] = Object.freeze([
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'sort',
  'uniq',
  'cut',
  'tr',
  'grep',
  'sed',
  'awk',
  'find',
  'xargs',
  'diff',
  'mkdir',
  'rmdir',
  'mv',
  'cp',
  'rm',
  'touch',
  'basename',
  'dirname',
  'realpath',
  'stat',
  'du',
  'date',
  'tee',
  'git',
]);

/**
 * Builtins of bash that run no other program. Left out on purpose: the ones that run a string or a path
 * as code or bypass the command search (`eval`, `exec`, `source`, `.`, `command`, `builtin`, `enable`,
 * `hash`, `trap`).
 */
const SAFE_BUILTINS: ReadonlySet<string> = new Set([
  ':',
  '[',
  'break',
  'cd',
  'continue',
  'declare',
  'echo',
  'exit',
  'export',
  'false',
  'let',
  'local',
  'printf',
  'pushd',
  'popd',
  'pwd',
  'read',
  'readonly',
  'return',
  'set',
  'shift',
  'shopt',
  'test',
  'true',
  'type',
  'typeset',
  'unset',
  'wait',
]);

/**
 * Checks a command line against an allow-list before a real bash runs it. Every command name must be written
 * out (no `$cmd`, no path such as `/usr/bin/curl` or `./x`) and be an allowed program, a function the line
 * defines, or a harmless builtin; no protected variable (`PATH`, `LD_*` …, see `isProtectedVariable`) may be
 * set by any route; and no construct may make bash evaluate text as code at run time (see `checkExpansions`),
 * since a program named there would escape this check. What the check cannot read, it refuses. This is a
 * guard-rail for an agent's mistakes, not a security boundary: an allowed program (git, xargs, awk, find
 * -exec …) can still run others. The PATH holding only the allowed programs backs the name check.
 */
export function checkCommandLine(command: string, allowed: ReadonlySet<string>): void {
  const parser = justBash(); // loaded outside the try: a broken install is not a parse error
  let script: unknown;
  try {
    script = parser.parse(command);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidArgumentError(`the command line does not parse: ${message}`);
  }
  const functions = new Set<string>();
  forEachNode(script, (node) => {
    if (node.type === 'FunctionDef' && typeof node.name === 'string') functions.add(node.name);
  });
  forEachNode(script, (node) => {
    if (node.type !== 'SimpleCommand' || node.name === null || node.name === undefined) return;
    const name = literalWord(node.name);
    if (name === undefined) throw new PolicyError('the host shell runs only command names written out (not $variables or substitutions)');
    if (name.includes('/')) throw new PolicyError(`the host shell runs commands by name only, not by path: ${name}`);
    if (!allowed.has(name) && !SAFE_BUILTINS.has(name) && !functions.has(name)) {
      throw new PolicyError(`${name} is not an allowed command here (allowed: ${[...allowed].sort().join(', ')})`);
    }
  });
  checkExpansions(script, checkVariables(script));
}
