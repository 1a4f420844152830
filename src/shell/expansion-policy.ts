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
import { NUMERIC_SPECIALS, type VariableFacts } from './variable-policy.js';

/**
 * Node types of just-bash's parse tree the check understands. Anything else (a construct of a newer parser,
 * text it kept unparsed, a syntax error it deferred) is refused: what the check cannot read, it does not run.
 */
const KNOWN: ReadonlySet<string> = new Set([
  'Script',
  'Statement',
  'Pipeline',
  'SimpleCommand',
  'If',
  'For',
  'CStyleFor',
  'While',
  'Until',
  'Case',
  'CaseItem',
  'Subshell',
  'Group',
  'ArithmeticCommand',
  'ConditionalCommand',
  'FunctionDef',
  'Assignment',
  'Redirection',
  'HereDoc',
  'Word',
  'Literal',
  'SingleQuoted',
  'DoubleQuoted',
  'Escaped',
  'ParameterExpansion',
  'CommandSubstitution',
  'ArithmeticExpansion',
  'ProcessSubstitution',
  'BraceExpansion',
  'Range',
  'TildeExpansion',
  'Glob',
  'CondBinary',
  'CondUnary',
  'CondNot',
  'CondAnd',
  'CondOr',
  'CondGroup',
  'CondWord',
  'DefaultValue',
  'AssignDefault',
  'ErrorIfUnset',
  'UseAlternative',
  'Length',
  'Substring',
  'PatternRemoval',
  'PatternReplacement',
  'CaseModification',
  'Transform',
  'ArrayKeys',
  'VarNamePrefix',
  // arithmetic: numbers, operators, variables and array elements (checked below)
  'ArithmeticExpression',
  'ArithNumber',
  'ArithVariable',
  'ArithSpecialVar',
  'ArithBinary',
  'ArithUnary',
  'ArithTernary',
  'ArithAssignment',
  'ArithGroup',
  'ArithNested',
  'ArithArrayElement',
]);

const ARITHMETIC_COMPARISONS: ReadonlySet<string> = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

const NUMERIC_ONLY =
  'arithmetic (and an indexed array subscript, [[ -eq ]], ${x:offset}) may use only numbers and variables the command line sets to numbers: ' +
  'bash evaluates a variable holding text as code there. Compare text with [ "$x" -gt 3 ], or compute with awk';

/**
 * Refuses every construct in which bash evaluates text at run time as code, so that a program named there
 * (`let 'x[$(/usr/bin/id)]=1'`, `n=$(cat f); echo $((n))`, `${!ref}`, `${x@P}`) cannot run past the
 * allow-list: arithmetic over variables that may hold text, a command substitution inside arithmetic, a
 * subscript that is not arithmetic over numbers (or a plain key of an associative array), indirection,
 * prompt expansion, and anything the parser left unparsed.
 */
export function checkExpansions(script: unknown, facts: VariableFacts): void {
  forEachNode(script, (node) => {
    const type = String(node.type);
    if (!KNOWN.has(type)) throw new PolicyError(`the host shell cannot check this command line (${describe(node)}), so it does not run it`);
    if (type === 'Statement' && node.deferredError !== undefined) throw new PolicyError('the command line does not parse');
    switch (type) {
      case 'ArithVariable':
        numericVariable(String(node.name), facts);
        break;
      case 'ArithSpecialVar':
        if (!NUMERIC_SPECIALS.has(String(node.name))) throw new PolicyError(`${NUMERIC_ONLY} ($${String(node.name)} is text)`);
        break;
      case 'ArithArrayElement':
        numericVariable(String(node.array), facts);
        break;
      case 'ArithAssignment':
        if (isProtectedVariable(String(node.variable)))
          throw new PolicyError(`the host shell does not let a command set ${String(node.variable)}`);
        break;
      case 'Assignment': {
        const target = splitSubscript(String(node.name));
        if (target?.subscript !== undefined) subscript(target.name, target.subscript, facts);
        if (target !== undefined) for (const element of (node.array as unknown[] | null) ?? []) keyedElement(target.name, element, facts);
        break;
      }
      case 'ParameterExpansion':
        parameterExpansion(node, facts);
        break;
      case 'CondBinary':
        if (ARITHMETIC_COMPARISONS.has(String(node.operator))) {
          arithmeticWord(node.left, facts);
          arithmeticWord(node.right, facts);
        }
        break;
      case 'CondUnary':
        if (node.operator === '-v') variableOperand(node.operand);
        break;
      case 'SimpleCommand':
        if (literalWord(node.name) === 'let') for (const arg of (node.args as unknown[]) ?? []) arithmeticWord(arg, facts);
        break;
    }
  });
}

/** `a=([KEY]=value …)`: KEY is a subscript like any other, and must be written out to be checked. */
function keyedElement(array: string, element: unknown, facts: VariableFacts): void {
  const first = ((element as { parts?: AstNode[] }).parts ?? [])[0];
  if (first?.type !== 'Glob' || !String(first.pattern).startsWith('[')) return;
  const parts = (element as { parts: AstNode[] }).parts;
  const key = /^\[(.*?)\]\+?=/s.exec(String(first.pattern) + literalPrefix({ parts: parts.slice(1) }).text);
  if (key === null) throw new PolicyError(`the host shell runs a keyed array element only with its key written out (${array}=([KEY]=…))`);
  subscript(array, key[1]!, facts);
}

function describe(node: AstNode): string {
  if (node.type === 'ArithCommandSubst') return 'a command substitution inside arithmetic';
  if (node.type === 'BadSubstitution') return 'a bad substitution';
  return `a ${String(node.type)}`;
}

function numericVariable(name: string, facts: VariableFacts): void {
  if (/^\d+$/.test(name)) throw new PolicyError(`${NUMERIC_ONLY} ($${name} is text)`);
  if (!NUMERIC_SPECIALS.has(name) && !facts.isNumeric(name)) throw new PolicyError(`${NUMERIC_ONLY} (${name} may hold text)`);
}

function parameterExpansion(node: AstNode, facts: VariableFacts): void {
  const operation = node.operation as AstNode | null;
  if (operation?.type === 'Indirection')
    throw new PolicyError('the host shell does not run ${!name}: bash evaluates the name it holds at run time');
  if (operation?.type === 'Transform' && operation.operator === 'P') {
    throw new PolicyError('the host shell does not run ${x@P}: prompt expansion runs the command substitutions in the text');
  }
  const parameter = String(node.parameter);
  if (!parameter.includes('[')) return;
  const target = splitSubscript(parameter);
  if (target?.subscript === undefined) throw new PolicyError(`the host shell cannot check \${${parameter}}`);
  if (target.subscript === '@' || target.subscript === '*') return;
  subscript(target.name, target.subscript, facts);
}

/** A plain key of an associative array: written out, quoted, or one variable (bash does not evaluate it). */
const PLAIN_KEY = /^(?:[\w.:/@%+,-]+|"[^"$`\\]*"|'[^']*'|"?\$\{?[A-Za-z_]\w*\}?"?)$/;

/** An indexed array's subscript is arithmetic; an associative array's is a key. */
function subscript(array: string, text: string, facts: VariableFacts): void {
  if (facts.isAssociative(array)) {
    if (!PLAIN_KEY.test(text))
      throw new PolicyError(`the host shell runs an associative array's key only written out or as one $variable: ${array}[${text}]`);
    return;
  }
  arithmeticText(text, facts, `${array}[${text}]`);
}

/** Arithmetic given as text (a subscript, a `let` operand): numbers, operators, names, `$name` and `$((…))`. */
function arithmeticText(text: string, facts: VariableFacts, shown: string): void {
  const arithmetic = parseArithmetic(text);
  if (arithmetic === undefined) throw new PolicyError(`${NUMERIC_ONLY} (${shown})`);
  checkExpansions(arithmetic, facts);
}

/** An operand bash evaluates as arithmetic (`[[ a -eq b ]]`, `let`): a number, one numeric variable, or arithmetic text. */
function arithmeticWord(word: unknown, facts: VariableFacts): void {
  const text = literalWord(word);
  if (text !== undefined) {
    arithmeticText(text, facts, text);
    return;
  }
  const expansion = soleExpansion(word);
  if (expansion?.type === 'ArithmeticExpansion') return; // a number; its inside is checked where it stands
  if (expansion?.type === 'ParameterExpansion') {
    const operation = expansion.operation as AstNode | null;
    const parameter = String(expansion.parameter);
    if (operation?.type === 'Length') return;
    if (operation === null && (NUMERIC_SPECIALS.has(parameter) || IDENTIFIER.test(parameter))) {
      numericVariable(parameter, facts);
      return;
    }
  }
  throw new PolicyError(`${NUMERIC_ONLY} (an operand made at run time)`);
}

function variableOperand(word: unknown): void {
  const text = literalWord(word);
  if (text === undefined || !/^[A-Za-z_]\w*(?:\[\d+\])?$/.test(text)) {
    throw new PolicyError(
      `the host shell runs [[ -v NAME ]] only with NAME written out (a number at most as subscript): ${text ?? 'a name made at run time'}`,
    );
  }
}
