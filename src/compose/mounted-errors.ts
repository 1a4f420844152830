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
  const mention = new RegExp(`(^|[\\s:'"(])${escapeRegExp(shown)}(?=$|[\\s'")),;])`, 'g');
  const message = error.message.replace(mention, (_, lead: string) => `${lead}${outer}`);
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

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
