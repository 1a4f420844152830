import { lazyRequire } from '../workspace/lazy-require.js';

/** Reading just-bash's parse tree (`just-bash`'s `parse()`): nodes, words, and the text of words. */

const justBash = lazyRequire<typeof import('just-bash')>('just-bash');

export type AstNode = { type?: unknown } & Record<string, unknown>;

/** Calls `visit` on every node under `value` (itself included), depth first. */
export function forEachNode(value: unknown, visit: (node: AstNode) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) forEachNode(item, visit);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const node = value as AstNode;
  if (typeof node.type === 'string') visit(node);
  for (const child of Object.values(node)) forEachNode(child, visit);
}

type Part = { type?: unknown; value?: unknown; parts?: unknown; pattern?: unknown };

function partsOf(word: unknown): Part[] | undefined {
  const parts = (word as { parts?: unknown } | null)?.parts;
  return Array.isArray(parts) ? (parts as Part[]) : undefined;
}

/** The text of a word with no expansion in it (a lone `[` counts as text), or undefined. */
export function literalWord(word: unknown): string | undefined {
  const { text, complete } = literalPrefix(word);
  return complete ? text : undefined;
}

/** The text a word starts with before its first expansion, and whether that is the whole word. */
export function literalPrefix(word: unknown): { text: string; complete: boolean } {
  const parts = partsOf(word);
  if (parts === undefined) return { text: '', complete: false };
  let text = '';
  for (const part of parts) {
    if ((part.type === 'Literal' || part.type === 'SingleQuoted' || part.type === 'Escaped') && typeof part.value === 'string') {
      text += part.value;
    } else if (part.type === 'Glob' && (part.pattern === '[' || part.pattern === ']')) {
      text += part.pattern;
    } else if (part.type === 'DoubleQuoted') {
      const inner = literalPrefix(part);
      text += inner.text;
      if (!inner.complete) return { text, complete: false };
    } else {
      return { text, complete: false };
    }
  }
  return { text, complete: true };
}

/** The word's single expansion, unwrapped from double quotes (`$x`, `"$x"`, `$((…))`), or undefined. */
export function soleExpansion(word: unknown): AstNode | undefined {
  const parts = partsOf(word);
  if (parts?.length !== 1) return undefined;
  const [part] = parts as [AstNode & Part];
  if (part.type === 'DoubleQuoted') return soleExpansion(part);
  return part.type === 'ParameterExpansion' || part.type === 'ArithmeticExpansion' ? part : undefined;
}

export const IDENTIFIER = /^[A-Za-z_]\w*$/;

/** `name` or `name[subscript]`: the name and the subscript's text, or undefined for anything else. */
export function splitSubscript(reference: string): { name: string; subscript?: string } | undefined {
  const match = /^([A-Za-z_]\w*)(?:\[(.*)\])?$/s.exec(reference);
  if (match === null) return undefined;
  return match[2] === undefined ? { name: match[1]! } : { name: match[1]!, subscript: match[2] };
}

/** Text bash evaluates as arithmetic (a `let` operand, a subscript) parsed as `(( text ))`, or undefined. */
export function parseArithmetic(text: string): AstNode | undefined {
  // Nothing that could end the arithmetic command and start another, or expand before evaluation.
  if (/[`'"\\;\n{}]|[<>]\(|\$(?!\(\(|[A-Za-z_])/.test(text)) return undefined;
  let script: unknown;
  try {
    script = justBash().parse(`(( ${text} ))`);
  } catch {
    return undefined;
  }
  const statements = (script as { statements?: { pipelines: { commands: AstNode[] }[] }[] }).statements ?? [];
  const commands = statements.flatMap((statement) => statement.pipelines.flatMap((pipeline) => pipeline.commands));
  return commands.length === 1 && commands[0]!.type === 'ArithmeticCommand' ? commands[0] : undefined;
}
