/** One output stream as a result carries it: at most `max` characters, the cut said in the text itself. */
export interface CappedOutput {
  text: string;
  /** Characters left out of `text`. */
  omitted: number;
}

/**
 * Keeps the head and the tail of a long output (a build log's error is at its end, a listing's order at its
 * start) and says in the middle how much was left out and how to see it.
 */
export function capOutput(output: string, max: number, stream: 'stdout' | 'stderr'): CappedOutput {
  if (output.length <= max) return { text: output, omitted: 0 };
  const head = Math.ceil(max / 2);
  const tail = max - head;
  const omitted = output.length - head - tail;
  const note =
    `\n[... ${omitted} characters of ${stream} not shown: redirect to a file and read it in parts, ` +
    `or narrow the command with head, tail or grep ...]\n`;
  return { text: `${output.slice(0, head)}${note}${tail > 0 ? output.slice(-tail) : ''}`, omitted };
}

/** What a command produced, before the caps. */
export interface ShellOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  changed: string[];
}

/** The `value` of a successful `bash` call. */
export interface ShellResult extends ShellOutcome {
  /** Capped at `maxOutputChars`, with a note in the middle saying how much was left out. */
  stdout: string;
  stderr: string;
  /** Workspace paths the command wrote, created, moved or deleted, sorted. */
  changed: string[];
}

/** A successful call's result: the streams capped, and the text a model reads. */
export function shellSuccess(outcome: ShellOutcome, maxOutputChars: number): { success: true; message: string; value: ShellResult } {
  const value: ShellResult = {
    exitCode: outcome.exitCode,
    stdout: capOutput(outcome.stdout, maxOutputChars, 'stdout').text,
    stderr: capOutput(outcome.stderr, maxOutputChars, 'stderr').text,
    changed: outcome.changed,
  };
  return { success: true, message: describe(value, maxOutputChars), value };
}

/** The text a model reads: the exit code, each non-empty stream, and what changed (listed within `max` characters). */
function describe(result: ShellResult, max: number): string {
  const parts = [`Exit code: ${result.exitCode}`];
  if (result.stdout !== '') parts.push(`--- stdout ---\n${result.stdout.replace(/\n$/, '')}`);
  if (result.stderr !== '') parts.push(`--- stderr ---\n${result.stderr.replace(/\n$/, '')}`);
  if (result.stdout === '' && result.stderr === '') parts.push('(no output)');
  if (result.changed.length > 0) parts.push(listChanged(result.changed, max));
  return parts.join('\n');
}

/**
 * The changed paths as one line of at most about `max` characters: an install or a build makes thousands,
 * and the line would otherwise outgrow the capped streams many times over. The first paths in order, then
 * how many more (the result's `changed` keeps them all).
 */
function listChanged(changed: readonly string[], max: number): string {
  const all = `Changed: ${changed.join(', ')}`;
  if (all.length <= max) return all;
  const shown: string[] = [];
  let length = 0;
  for (const path of changed) {
    if (length + path.length + 2 > max) break;
    shown.push(path);
    length += path.length + 2;
  }
  return `Changed (${changed.length}): ${[...shown, `… and ${changed.length - shown.length} more`].join(', ')}`;
}
