import { readlinkSync, realpathSync } from 'node:fs';

/**
 * The target text of the link at `hostPath` (in directory `relative` of the source whose real directory is
 * `root`) when it stays inside the source, else `undefined` (the link then follows the rule for links
 * leaving a source). It stays inside when it is relative, its `..` never climb above the source read
 * from the link's directory, and, when the host resolves it, what it reaches lies inside the source (a
 * link on the way may lead elsewhere). A dangling link or a loop is data: it is copied as it is.
 */
export function linkInSource(root: string, relative: string, hostPath: string): string | undefined {
  let target: string;
  try {
    target = new TextDecoder('utf-8', { fatal: true }).decode(readlinkSync(hostPath, { encoding: 'buffer' }));
  } catch {
    return undefined;
  }
  if (target === '' || target.startsWith('/')) return undefined;
  let depth = relative === '' ? 0 : relative.split('/').length;
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    depth += segment === '..' ? -1 : 1;
    if (depth < 0) return undefined;
  }
  let real: string;
  try {
    real = realpathSync.native(hostPath);
  } catch {
    return target;
  }
  return real === root || real.startsWith(`${root}/`) ? target : undefined;
}
