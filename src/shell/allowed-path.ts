import { accessSync, constants, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { createOwnedTemp, removeOwnedTemp } from '../backends/host/owned-temp.js';

/** The allowed programs found on the host's PATH, by name (programs not found are left out). */
export function locatePrograms(commands: readonly string[], searchPath = process.env.PATH ?? ''): Map<string, string> {
  const programs = new Map<string, string>();
  for (const command of commands) {
    const found = findExecutable(command, searchPath);
    if (found !== undefined) programs.set(command, found);
  }
  return programs;
}

/**
 * A private directory holding a link to each allowed program, used as the only PATH of one command line: a
 * program not on the list is "command not found" even when a script, `xargs` or `find -exec` names it.
 * Made for one command and removed (`remove()`) when it has ended, so no directory outlives its command
 * (one made per shell and removed at process exit was left behind by every process that was killed).
 */
export function allowedPathDirectory(programs: ReadonlyMap<string, string>): { path: string; remove(): void } {
  // Owned by this process: removed at exit if a command is still running then, swept after a kill -9.
  const dir = createOwnedTemp('shell-path');
  const remove = (): void => removeOwnedTemp(dir);
  try {
    for (const [name, program] of programs) symlinkSync(program, join(dir, name));
  } catch (error) {
    remove();
    throw error;
  }
  return { path: dir, remove };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable called `name` on `searchPath`, or undefined. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  return searchPath
    .split(delimiter)
    .filter((entry) => entry !== '')
    .map((entry) => join(entry, name))
    .find(isExecutable);
}
