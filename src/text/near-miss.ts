import { lazyRequire } from '../workspace/lazy-require.js';

const diff = lazyRequire<typeof import('diff')>('diff');

/** The region of a file most similar to an `old_string` that was not found, and how to get there. */
export interface NearMiss {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  /** 0–1: 2 × matching characters / total characters (difflib's ratio). */
  similarity: number;
  /** Unified-diff lines (` `, `-`, `+`) from `old_string` to the region, at most `MAX_DIFF_LINES`. */
  diff: string[];
}

/** Regions below this similarity are not worth showing (the contract's 60%). */
export const NEAR_MISS_THRESHOLD = 0.6;
const MAX_DIFF_LINES = 16;
/** Candidates scored exactly after the cheap bigram pass. */
const CANDIDATES = 3;
/** Past these sizes the exact character diff is too costly for a hint: no hint rather than a slow failure. */
const MAX_NEEDLE_CHARS = 8000;
const MAX_FILE_LINES = 50_000;

/**
 * The window of the file's lines (as many as `needle` has) most similar to `needle`, when at least
 * `NEAR_MISS_THRESHOLD` similar. Both in LF form. Candidates are found by a sliding bigram overlap (linear
 * in the file), then the best few are scored exactly with a character diff.
 */
export function findNearMiss(text: string, needle: string): NearMiss | undefined {
  const needleLines = trimFinalBreak(needle).split('\n');
  const lines = trimFinalBreak(text).split('\n');
  if (needle.trim() === '' || needle.length > MAX_NEEDLE_CHARS || lines.length > MAX_FILE_LINES) return undefined;
  const size = Math.min(needleLines.length, lines.length);
  let best: NearMiss | undefined;
  for (const start of bigramCandidates(lines, needleLines.join('\n'), size)) {
    const region = lines.slice(start, start + size).join('\n');
    const similarity = ratio(needleLines.join('\n'), region);
    if (best === undefined || similarity > best.similarity) best = { startLine: start + 1, endLine: start + size, similarity, diff: [] };
  }
  if (best === undefined || best.similarity < NEAR_MISS_THRESHOLD) return undefined;
  best.diff = shortDiff(needleLines.join('\n'), lines.slice(best.startLine - 1, best.endLine).join('\n'));
  return best;
}

/** One sentence plus the diff, for a failure message. */
export function describeNearMiss(miss: NearMiss): string {
  const where = miss.startLine === miss.endLine ? `line ${miss.startLine}` : `lines ${miss.startLine}-${miss.endLine}`;
  const percent = Math.round(miss.similarity * 100);
  return `The closest text is at ${where} (${percent}% similar); what differs (- old_string, + file):\n${miss.diff.join('\n')}`;
}

function ratio(a: string, b: string): number {
  if (a.length + b.length === 0) return 1;
  let same = 0;
  for (const part of diff().diffChars(a, b)) if (!part.added && !part.removed) same += part.value.length;
  return (2 * same) / (a.length + b.length);
}

function shortDiff(from: string, to: string): string[] {
  const patch = diff().structuredPatch('old_string', 'file', `${from}\n`, `${to}\n`, '', '', { context: 1 });
  const lines = patch.hunks.flatMap((hunk) => hunk.lines).filter((line) => !line.startsWith('\\'));
  if (lines.length <= MAX_DIFF_LINES) return lines;
  return [...lines.slice(0, MAX_DIFF_LINES), `… (${lines.length - MAX_DIFF_LINES} more diff lines)`];
}

/** Start lines of the `CANDIDATES` windows sharing the most character bigrams with the needle. */
function bigramCandidates(lines: string[], needle: string, size: number): number[] {
  const wanted = bigramCounts([needle]);
  const have = new Map<string, number>();
  let shared = 0;
  const add = (line: string, step: 1 | -1): void => {
    for (let i = 0; i + 1 < line.length; i += 1) {
      const gram = line.slice(i, i + 2);
      const count = have.get(gram) ?? 0;
      const cap = wanted.get(gram) ?? 0;
      if (step === 1 && count < cap) shared += 1;
      if (step === -1 && count <= cap) shared -= 1;
      have.set(gram, count + step);
    }
  };
  const scored: Array<{ start: number; score: number }> = [];
  for (let i = 0; i < lines.length; i += 1) {
    add(lines[i] as string, 1);
    if (i >= size) add(lines[i - size] as string, -1);
    if (i >= size - 1) scored.push({ start: i - size + 1, score: shared });
  }
  scored.sort((a, b) => b.score - a.score || a.start - b.start);
  return scored.slice(0, CANDIDATES).map((entry) => entry.start);
}

function bigramCounts(texts: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts)
    for (let i = 0; i + 1 < text.length; i += 1) {
      const gram = text.slice(i, i + 2);
      counts.set(gram, (counts.get(gram) ?? 0) + 1);
    }
  return counts;
}

function trimFinalBreak(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}
