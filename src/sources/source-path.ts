import { basename, posix, resolve } from 'node:path';

/**
 * Where a source lands in the workspace when it names no `path`: the base name of `hostPath` as given
 * (`./src/` lands at `src`); `.` and `..` take the name they stand for.
 */
export function defaultSourcePath(hostPath: string): string {
  const name = posix.basename(hostPath.replace(/\/+$/, ''));
  if (name === '.' || name === '..') return basename(resolve(hostPath));
  return name;
}
