import { WorkspaceError } from '../workspace/errors.js';
import { displayPath, joinPath, normalizePath, type NormalizedPath } from '../workspace/paths.js';

/**
 * A mounted workspace reports paths relative to its own root; the composition shows them as they appear in
 * the composed tree. The error keeps its class and code; its path and every mention of it in the message
 * are rewritten (a mention is the path standing alone: after a space, a colon or a quote).
 */
export function repathError(error: unknown, mountPath: NormalizedPath): unknown {
  if (!(error instanceof WorkspaceError) || error.path === undefined || mountPath === '') return error;
  let inner: NormalizedPath;
  try {
    inner = normalizePath(error.path);
  } catch {
    return error;
  }
  const outer = displayPath(inner === '' ? mountPath : joinPath(mountPath, inner));
  const shown = displayPath(inner);
  const message = replaceMentions(error.message, shown, outer);
  const moved = new WorkspaceError(error.code, message, outer, error.cause === undefined ? undefined : { cause: error.cause });
  Object.setPrototypeOf(moved, Object.getPrototypeOf(error) as object);
  Object.defineProperty(moved, 'name', { value: error.name, writable: true, configurable: true });
  return moved;
}

/** Runs a call on a mounted workspace, showing any error's path as the composition sees it. */
export async function inMount<T>(mountPath: NormalizedPath, task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (error) {
    throw repathError(error, mountPath);
  }
}

/** Characters a mention follows (or the start) and precedes (or the end). */
const BEFORE = /[\s:'"(]/;
const AFTER = /[\s'")),;]/;

/**
 * `message` with every standing-alone mention of `shown` as `outer`: a plain substring scan, as every missing
 * path a composed write probes builds one of these errors (a pattern compiled per error cost more).
 */
function replaceMentions(message: string, shown: string, outer: string): string {
  let out = '';
  let from = 0;
  for (let at = message.indexOf(shown); at !== -1 && shown !== ''; at = message.indexOf(shown, at + 1)) {
    const end = at + shown.length;
    if (at > 0 && !BEFORE.test(message[at - 1] as string)) continue;
    if (end < message.length && !AFTER.test(message[end] as string)) continue;
    out += message.slice(from, at) + outer;
    from = end;
    at = end - 1;
  }
  return from === 0 ? message : out + message.slice(from);
}
