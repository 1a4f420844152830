import type { MessagePort } from 'node:worker_threads';

/** One batch of files for a worker: every file's lines are matched with one regex. */
export interface MatchRequest {
  id: number;
  pattern: string;
  flags: string;
  /** Stop after this many matches (the call's remaining budget). */
  maxMatches: number;
  files: { path: string; bytes: Uint8Array }[];
}

export interface LineMatch {
  path: string;
  lineNumber: number;
  lineContent: string;
  matchStart: number;
  matchEnd: number;
}

export type MatchReply = { id: number; matches: LineMatch[] } | { id: number; error: string };

/**
 * The body of a match worker. It runs in a worker thread, so a regex that backtracks for ever blocks only
 * that thread, which the pool terminates at the deadline. It is self-contained (no imports, no closure):
 * the pool starts it from its source text, so the same code runs from `src/` under a TypeScript test
 * runner and from `dist/`. grep's line semantics live here and only here: strict UTF-8 (files that are
 * not are skipped), lines split on `\n` with one trailing `\r` dropped, the first match of each line.
 */
export function matchWorkerMain(port: MessagePort): void {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let cached: { key: string; regex: RegExp } | undefined;

  const matchBatch = (request: MatchRequest): LineMatch[] => {
    const key = `${request.flags}/${request.pattern}`;
    if (cached?.key !== key) cached = { key, regex: new RegExp(request.pattern, request.flags) };
    const regex = cached.regex;
    const matches: LineMatch[] = [];
    for (const file of request.files) {
      let text: string;
      try {
        text = decoder.decode(file.bytes);
      } catch {
        continue;
      }
      if (text === '') continue;
      const lines = text.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      for (let index = 0; index < lines.length; index += 1) {
        const raw = lines[index] as string;
        const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
        const match = regex.exec(line);
        if (match === null) continue;
        matches.push({
          path: file.path,
          lineNumber: index + 1,
          lineContent: line,
          matchStart: match.index,
          matchEnd: match.index + match[0].length,
        });
        if (matches.length >= request.maxMatches) return matches;
      }
    }
    return matches;
  };

  port.on('message', (request: MatchRequest) => {
    let reply: MatchReply;
    try {
      reply = { id: request.id, matches: matchBatch(request) };
    } catch (error) {
      reply = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply);
  });
}

/** What `new Worker(…, { eval: true })` runs: the function above, called with the thread's parent port. */
export const MATCH_WORKER_SOURCE = `(${matchWorkerMain.toString()})(require('node:worker_threads').parentPort);`;
