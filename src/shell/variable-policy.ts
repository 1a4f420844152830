import { PolicyError } from '../workspace/errors.js';
import { isProtectedVariable } from './protected-variables.js';
import {
  forEachNode,
  IDENTIFIER,
  literalPrefix,
  literalWord,
  parseArithmetic,
  soleExpansion,
  splitSubscript,
  type AstNode,
} from './shell-words.js';

/**
 * What a command line writes into its variables, as far as the static check needs it: bash evaluates a
 * variable's value as an arithmetic expression wherever the variable is used in arithmetic, and an array
 * subscript in that value runs command substitutions (`n='x[$(/usr/bin/id)]'; echo $((n))`). So arithmetic
 * may use a variable only when every value the line gives it is a number.
 */
export interface VariableFacts {
  /** Every value the line gives `name` is a number (or `name` is not set by the line and cannot hold text). */
  isNumeric(name: string): boolean;
  /** `name` is declared an associative array (`declare -A`): its subscripts are strings, never evaluated. */
  isAssociative(name: string): boolean;
}

/** Bash's own variables that always hold a number; its others (`_`, `REPLY`, `PWD`, `BASH_REMATCH` …) hold text. */
const NUMERIC_SHELL_VARIABLES: ReadonlySet<string> = new Set([
  'RANDOM',
  'SRANDOM',
  'SECONDS',
  'EPOCHSECONDS',
  'LINENO',
  'BASHPID',
  'PPID',
  'UID',
  'EUID',
  'OPTIND',
  'SHLVL',
  'PIPESTATUS',
  'HISTCMD',
  'COLUMNS',
  'LINES',
]);

/** Special parameters that are numbers: `$#`, `$?`, `$$`, `$!`. Positional ones (`$1`, `$@`) are text. */
export const NUMERIC_SPECIALS: ReadonlySet<string> = new Set(['#', '?', '$', '!']);

/** A value given to a variable: a number, text, or whatever another variable holds. */
type Value = { kind: 'number' } | { kind: 'text' } | { kind: 'copy'; of: string };
const NUMBER: Value = { kind: 'number' };
const TEXT: Value = { kind: 'text' };

/** Builtins whose operands name variables they set; `-n` (a name reference) and `-i` (integer) are refused. */
const DECLARING = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
const READ_OPTIONS_WITH_VALUE = 'adinNptu';

/**
 * Checks every place the command line sets a variable (assignments, `for`, `read`, `printf -v`, `declare`
 * and its kin, `${x:=…}`, `{fd}>`, arithmetic) and returns what it learnt. Refused: setting a protected
 * variable, a variable named at run time (`printf -v "$n"`, `declare "$x"`, `read "$n"`, a name reference),
 * and a subscript in a name operand (bash evaluates it at run time).
 */
export function checkVariables(script: unknown): VariableFacts {
  const values = new Map<string, Value[]>();
  const associative = new Set<string>();
  /** `value` undefined: the name is declared, exported or unset, and given no value a check could read. */
  const set = (name: string, value: Value | undefined) => {
    if (isProtectedVariable(name)) throw new PolicyError(`the host shell does not let a command set ${name}`);
    if (value !== undefined) values.set(name, [...(values.get(name) ?? []), value]);
  };

  forEachNode(script, (node) => {
    switch (node.type) {
      case 'Assignment': {
        const target = splitSubscript(String(node.name));
        if (target === undefined) throw new PolicyError(`the host shell cannot check the assignment to ${String(node.name)}`);
        const array = node.array as unknown[] | null;
        const given = array === null ? [valueOf(node.value)] : array.map(valueOf);
        // Appending joins texts into new names (`x=ab; x+=c` reads variable abc): text, whatever was appended.
        for (const value of given) set(target.name, node.append === true ? TEXT : value);
        break;
      }
      case 'For':
        set(String(node.variable), forValue(node.words));
        break;
      case 'Redirection':
        if (typeof node.fdVariable === 'string') set(node.fdVariable, NUMBER);
        break;
      case 'ArithAssignment':
        set(String(node.variable), NUMBER);
        break;
      case 'ParameterExpansion': {
        const operation = node.operation as AstNode | null;
        if (operation?.type === 'AssignDefault') {
          const target = splitSubscript(String(node.parameter));
          if (target === undefined) throw new PolicyError(`the host shell cannot check the assignment to ${String(node.parameter)}`);
          set(target.name, valueOf(operation.word));
        }
        break;
      }
      case 'SimpleCommand':
        builtinOperands(node, set, associative);
        break;
    }
  });

  const numeric = new Map<string, boolean>();
  const isNumeric = (name: string, seen: ReadonlySet<string> = new Set()): boolean => {
    const known = numeric.get(name);
    if (known !== undefined) return known;
    const given = values.get(name);
    if (given === undefined) return /[a-z]/.test(name) || NUMERIC_SHELL_VARIABLES.has(name);
    if (seen.has(name)) return true; // a cycle of copies brings in nothing but the numbers around it
    const result = given.every(
      (value) => value.kind === 'number' || (value.kind === 'copy' && isNumeric(value.of, new Set([...seen, name]))),
    );
    if (seen.size === 0) numeric.set(name, result);
    return result;
  };
  return { isNumeric: (name) => isNumeric(name), isAssociative: (name) => associative.has(name) };
}

function merged(value: Value, other: Value): Value {
  return value.kind === 'text' || other.kind === 'text' ? TEXT : value;
}

/** What a word gives a variable: a number, a copy of another variable, or text. */
function valueOf(word: unknown): Value {
  if (word === null || word === undefined) return NUMBER; // `x=` is empty, which arithmetic reads as 0
  const text = literalWord(word);
  if (text !== undefined) {
    if (/^[-+]?\d*$/.test(text)) return NUMBER;
    return IDENTIFIER.test(text) ? { kind: 'copy', of: text } : TEXT;
  }
  const expansion = soleExpansion(word);
  if (expansion?.type === 'ArithmeticExpansion') return NUMBER;
  if (expansion?.type === 'ParameterExpansion') {
    const operation = expansion.operation as AstNode | null;
    const parameter = String(expansion.parameter);
    if (operation?.type === 'Length' || (operation === null && NUMERIC_SPECIALS.has(parameter))) return NUMBER;
    if (operation === null && IDENTIFIER.test(parameter)) return { kind: 'copy', of: parameter };
  }
  return TEXT;
}

function forValue(words: unknown): Value {
  if (!Array.isArray(words)) return TEXT; // `for x; do` walks the positional parameters
  let value = NUMBER;
  for (const word of words as AstNode[]) {
    const parts = word.parts as AstNode[] | undefined;
    const range = parts?.length === 1 && parts[0]!.type === 'BraceExpansion' && numericRange(parts[0]!);
    value = merged(value, range ? NUMBER : valueOf(word));
  }
  return value;
}

function numericRange(brace: AstNode): boolean {
  const items = brace.items as { type: string; start?: unknown; end?: unknown }[];
  return items.every((item) => item.type === 'Range' && Number.isInteger(Number(item.start)) && Number.isInteger(Number(item.end)));
}

/** A variable named by an operand: written out, a plain name, a numeric subscript at most. */
function namedVariable(text: string | undefined, command: string): string {
  const target = text === undefined ? undefined : splitSubscript(text);
  if (target === undefined || (target.subscript !== undefined && !/^\d+$/.test(target.subscript))) {
    throw new PolicyError(
      `the host shell runs ${command} only with variable names written out (no $expansions, no [subscript] but a number): ${text ?? 'a name made at run time'}`,
    );
  }
  return target.name;
}

function builtinOperands(node: AstNode, set: (name: string, value: Value | undefined) => void, associative: Set<string>): void {
  const command = literalWord(node.name);
  const args = (node.args as unknown[] | undefined) ?? [];
  if (command === undefined) return;
  if (DECLARING.has(command)) {
    const flags: string[] = [];
    for (const arg of args) {
      const { text, complete } = literalPrefix(arg);
      if (complete && /^[-+]/.test(text)) {
        if (command !== 'export' && /[ni]/.test(text)) {
          throw new PolicyError(
            `the host shell does not run ${command} ${text}: name references and integer variables evaluate text at run time`,
          );
        }
        flags.push(text);
        continue;
      }
      const equals = text.indexOf('=');
      if (equals < 0 && !complete) throw new PolicyError(`the host shell runs ${command} only with variable names written out`);
      const name = namedVariable(equals < 0 ? text : text.slice(0, equals).replace(/\+$/, ''), command);
      if (!complete && text.slice(equals + 1).startsWith('(')) {
        throw new PolicyError(
          `the host shell runs ${command} NAME=(…) only written out; give the array its values in a separate assignment`,
        );
      }
      if (flags.some((flag) => flag.startsWith('-') && flag.includes('A'))) associative.add(name);
      if (flags.some((flag) => flag.includes('f') || flag.includes('F'))) continue; // functions, not variables
      set(name, equals < 0 ? undefined : declaredValue(arg, text, equals, complete));
    }
  } else if (command === 'read') {
    for (let index = 0; index < args.length; index += 1) {
      const text = literalWord(args[index]);
      if (text === undefined) throw new PolicyError('the host shell runs read only with options and variable names written out');
      if (text === '--' || !text.startsWith('-')) {
        if (text !== '--') set(namedVariable(text, 'read'), TEXT);
        continue;
      }
      for (let at = 1; at < text.length; at += 1) {
        if (!READ_OPTIONS_WITH_VALUE.includes(text[at]!)) continue;
        const value = at + 1 < text.length ? text.slice(at + 1) : literalWord(args[(index += 1)]);
        if (text[at] === 'a') set(namedVariable(value, 'read -a'), TEXT);
        break;
      }
    }
  } else if (command === 'printf' && args.length > 0) {
    const first = literalWord(args[0]);
    if (first === undefined) throw new PolicyError('the host shell runs printf only with its format (or -v NAME) written out');
    if (first.startsWith('-v')) set(namedVariable(first.length > 2 ? first.slice(2) : literalWord(args[1]), 'printf -v'), TEXT);
  } else if (command === 'unset') {
    for (const arg of args) {
      const text = literalWord(arg);
      if (text?.startsWith('-') === true) continue;
      set(namedVariable(text, 'unset'), undefined);
    }
  } else if (command === 'let') {
    // Its operands are arithmetic given as text (checked with the other arithmetic): what they assign counts.
    for (const arg of args) {
      const text = literalWord(arg);
      const arithmetic = text === undefined ? undefined : parseArithmetic(text);
      forEachNode(arithmetic, (inner) => {
        if (inner.type === 'ArithAssignment') set(String(inner.variable), NUMBER);
      });
    }
  } else if (command === 'wait') {
    waitOperands(args, set);
  } else if (command === 'test' || command === '[') {
    testOperands(args);
  }
}

/** `declare x=VALUE`: the value after `=`, a number only when plainly one. */
function declaredValue(arg: unknown, text: string, equals: number, complete: boolean): Value {
  if (complete) return valueOf({ parts: [{ type: 'Literal', value: text.slice(equals + 1) }] });
  const parts = (arg as { parts: unknown[] }).parts;
  const head = literalWord({ parts: parts.slice(0, 1) });
  return head === text && parts.length === 2 && text.endsWith('=') ? valueOf({ parts: parts.slice(1) }) : TEXT;
}

/** `wait -p NAME` sets NAME; an operand made at run time could be that `-p`, so it must come last. */
function waitOperands(args: unknown[], set: (name: string, value: Value | undefined) => void): void {
  args.forEach((arg, index) => {
    const text = literalWord(arg);
    if (text === undefined && index < args.length - 1) {
      throw new PolicyError('the host shell runs wait with at most one operand made at run time, the last one');
    }
    if (text?.startsWith('-p') === true)
      set(namedVariable(text.length > 2 ? text.slice(2) : literalWord(args[index + 1]), 'wait -p'), TEXT);
  });
}

const TEST_OPERATORS = /^(?:-[a-zA-Z]+|=|==|!=|<|>|!|\(|\))$/;

/**
 * `test -v NAME` evaluates NAME's subscript at run time, so its operand must be written out; and an operand
 * made at run time must stand where no operator can (after an operator, or before a binary one).
 */
function testOperands(args: unknown[]): void {
  const texts = args.map(literalWord);
  texts.forEach((text, index) => {
    if (text === '-v') namedVariable(texts[index + 1], 'test -v');
    if (text !== undefined) return;
    const before = texts[index - 1];
    const after = texts[index + 1];
    const operand =
      (before !== undefined && TEST_OPERATORS.test(before) && before !== ')') ||
      (after !== undefined && TEST_OPERATORS.test(after) && after !== '(');
    const alone = args.length - (texts.at(-1) === ']' ? 1 : 0) === 1;
    if (!operand && !alone) throw new PolicyError('the host shell runs test only with its operators written out');
  });
}
