import { lazyRequire } from '../workspace/lazy-require.js';
import { InvalidArgumentError, PolicyError } from '../workspace/errors.js';

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

/** Variables that decide which program runs or what bash loads: a command may not set them. */
const PROTECTED_VARIABLES: ReadonlySet<string> = new Set([
  'PATH',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'CDPATH',
  'IFS',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
]);

/**
 * Checks a command line against an allow-list before a real bash runs it: every command name must be
 * written out (no `$cmd`, no path such as `/usr/bin/curl` or `./x`) and be an allowed program, a function
 * the line defines, or a harmless builtin; no protected variable may be assigned. This is a guard-rail for
 * an agent's mistakes, not a security boundary: an allowed program (git, xargs, find -exec …) can still run
 * others. The real enforcement is the PATH holding only the allowed programs.
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
  collect(script, (node) => {
    if (node.type === 'FunctionDef' && typeof node.name === 'string') functions.add(node.name);
  });
  collect(script, (node) => {
    if (node.type === 'Assignment' && typeof node.name === 'string' && PROTECTED_VARIABLES.has(node.name)) {
      throw new PolicyError(`the host shell does not let a command set ${node.name}`);
    }
    if (node.type !== 'SimpleCommand' || node.name === null || node.name === undefined) return;
    const name = literalWord(node.name);
    if (name === undefined) throw new PolicyError('the host shell runs only command names written out (not $variables or substitutions)');
    if (name.includes('/')) throw new PolicyError(`the host shell runs commands by name only, not by path: ${name}`);
    for (const word of [name, ...exportedNames(name, node.args)]) {
      if (PROTECTED_VARIABLES.has(word)) throw new PolicyError(`the host shell does not let a command set ${word}`);
    }
    if (!allowed.has(name) && !SAFE_BUILTINS.has(name) && !functions.has(name)) {
      throw new PolicyError(`${name} is not an allowed command here (allowed: ${[...allowed].sort().join(', ')})`);
    }
  });
}

type AstNode = { type?: unknown; name?: unknown; args?: unknown } & Record<string, unknown>;

function collect(value: unknown, visit: (node: AstNode) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) collect(item, visit);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const node = value as AstNode;
  if (typeof node.type === 'string') visit(node);
  for (const child of Object.values(node)) collect(child, visit);
}

/** The text of a word with no expansion in it, or undefined. */
function literalWord(word: unknown): string | undefined {
  const parts = (word as { parts?: unknown }).parts;
  if (!Array.isArray(parts)) return undefined;
  let text = '';
  for (const part of parts as { type?: unknown; value?: unknown; parts?: unknown }[]) {
    if ((part.type === 'Literal' || part.type === 'SingleQuoted' || part.type === 'Escaped') && typeof part.value === 'string') {
      text += part.value;
    } else if (part.type === 'DoubleQuoted') {
      const inner = literalWord(part);
      if (inner === undefined) return undefined;
      text += inner;
    } else {
      return undefined;
    }
  }
  return text;
}

/** For `export`, `declare`, `readonly`, `local`, `typeset`, `read`, `unset`: the variable names it sets. */
function exportedNames(name: string, args: unknown): string[] {
  if (!['export', 'declare', 'readonly', 'local', 'typeset', 'read', 'unset'].includes(name) || !Array.isArray(args)) return [];
  return args.map((arg) => (literalWord(arg) ?? '').split('=')[0] ?? '').filter((word) => word !== '');
}
