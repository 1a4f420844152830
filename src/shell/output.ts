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
