/**
 * The longest literal every match of a regular expression must contain, for a prefilter: a file (or line)
 * without it cannot match, so it is neither decoded nor split. Sound by construction, not complete: the
 * parser understands the pattern only as far as it must (the pattern was already compiled with the `u`
 * flag, so it is valid u-mode syntax) and gives up (`undefined`) on anything it does not model: a top-level
 * alternation, an unknown escape, case-insensitive matching of a cased letter.
 *
 * A "run" is a sequence of literal characters matched one after another; groups, classes, `.`, assertions
 * and class escapes end a run; a quantifier that allows zero (`?`, `*`, `{0,…}`) takes its character out of
 * the run, and one that repeats (`+`, `{n,…}`) ends the run after its character.
 */
export function requiredLiteral(pattern: string, ignoreCase: boolean): string | undefined {
  return requiredLiterals(pattern, ignoreCase)?.[0];
}

/**
 * Every run a match must contain (see `requiredLiteral`), longest first (in UTF-8 bytes; the earlier of two
 * as long): a line without any one of them cannot match. Undefined where `requiredLiteral` gives up.
 */
export function requiredLiterals(pattern: string, ignoreCase: boolean): string[] | undefined {
  const chars = Array.from(pattern);
  const runs: string[][] = [];
  let run: string[] = [];
  const endRun = (): void => {
    if (run.length > 0) runs.push(run);
    run = [];
  };
  let index = 0;
  while (index < chars.length) {
    const char = chars[index] as string;
    let literal: string | undefined;
    let next = index + 1;
    if (char === '\\') {
      const escaped = chars[index + 1];
      if (escaped === undefined) return undefined;
      next = index + 2;
      if (SYNTAX_CHARACTERS.includes(escaped)) literal = escaped;
      else if (escaped === 'p' || escaped === 'P') {
        const close = chars.indexOf('}', index);
        if (chars[index + 2] !== '{' || close === -1) return undefined;
        next = close + 1;
      } else if (!CLASS_ESCAPES.includes(escaped)) return undefined;
    } else if (char === '[') {
      next = skipClass(chars, index);
      if (next === -1) return undefined;
    } else if (char === '(') {
      next = skipGroup(chars, index);
      if (next === -1) return undefined;
    } else if (char === '|' || char === ')' || char === ']' || char === '{' || char === '}') {
      return undefined;
    } else if (char === '*' || char === '+' || char === '?') {
      return undefined; // a quantifier with nothing to repeat: not valid u-mode syntax
    } else if (char !== '.' && char !== '^' && char !== '$') {
      literal = char;
    }
    const quantifier = readQuantifier(chars, next);
    if (quantifier === undefined) return undefined;
    next = quantifier.end;
    if (literal !== undefined && (!ignoreCase || !isCased(literal))) {
      if (quantifier.min === 0) endRun();
      else {
        run.push(literal);
        if (quantifier.repeats) endRun();
      }
    } else {
      endRun();
    }
    index = next;
  }
  endRun();
  const texts = runs.map((candidate) => candidate.join(''));
  if (texts.length === 0) return undefined;
  return texts.sort((a, b) => Buffer.byteLength(b) - Buffer.byteLength(a));
}

/** Characters u-mode lets a backslash make literal. */
const SYNTAX_CHARACTERS = ['^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/', '-'];
/** Two-character escapes that are not one literal character (classes, assertions, controls). */
const CLASS_ESCAPES = ['d', 'D', 'w', 'W', 's', 'S', 'b', 'B', 'n', 'r', 't', 'f', 'v', '0'];

function isCased(char: string): boolean {
  return char.toLowerCase() !== char.toUpperCase() || /\p{L}/u.test(char);
}

/** The index after a `[...]` class, escapes inside it skipped; -1 when unterminated. */
function skipClass(chars: readonly string[], start: number): number {
  for (let index = start + 1; index < chars.length; index += 1) {
    if (chars[index] === '\\') index += 1;
    else if (chars[index] === ']') return index + 1;
  }
  return -1;
}

/** The index after a balanced `(...)`, classes and escapes inside it skipped; -1 when unbalanced. */
function skipGroup(chars: readonly string[], start: number): number {
  let depth = 0;
  for (let index = start; index < chars.length; index += 1) {
    const char = chars[index];
    if (char === '\\') index += 1;
    else if (char === '[') {
      const end = skipClass(chars, index);
      if (end === -1) return -1;
      index = end - 1;
    } else if (char === '(') depth += 1;
    else if (char === ')') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/** The quantifier at `start` (if any, with a lazy `?`): its minimum, whether it may repeat, and where it ends. */
function readQuantifier(chars: readonly string[], start: number): { min: number; repeats: boolean; end: number } | undefined {
  const char = chars[start];
  let result: { min: number; repeats: boolean; end: number };
  if (char === '*') result = { min: 0, repeats: true, end: start + 1 };
  else if (char === '+') result = { min: 1, repeats: true, end: start + 1 };
  else if (char === '?') result = { min: 0, repeats: false, end: start + 1 };
  else if (char === '{') {
    const close = chars.indexOf('}', start);
    const body = close === -1 ? undefined : /^(\d+)(,(\d*))?$/.exec(chars.slice(start + 1, close).join(''));
    if (body === undefined || body === null) return undefined;
    const min = Number(body[1]);
    const max = body[2] === undefined ? min : body[3] === '' ? Infinity : Number(body[3]);
    result = { min, repeats: max > 1, end: close + 1 };
  } else return { min: 1, repeats: false, end: start };
  if (chars[result.end] === '?') result.end += 1;
  return result;
}
