import { basename, posix, resolve } from 'node:path';

/** The base name of `hostPath` as given (`./src/` mounts at `src`); `.` and `..` take the name they stand for. */
export function defaultMountPath(hostPath: string): string {
  const name = posix.basename(hostPath.replace(/\/+$/, ''));
  if (name === '.' || name === '..') return basename(resolve(hostPath));
  return name;
}
