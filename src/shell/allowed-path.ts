import { accessSync, constants, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const created: string[] = [];
let cleanupInstalled = false;

/**
 * A private directory holding a link to each allowed program found on the host's PATH, used as the only
 * PATH of the host shell: a program not on the list is "command not found" even when a script, `xargs`
 * or `find -exec` names it. Removed when the process exits.
 */
export function allowedPathDirectory(commands: readonly string[], searchPath = process.env.PATH ?? ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'sessionfs-shell-path-'));
  created.push(dir);
  installCleanup();
  for (const command of new Set(commands)) {
    const found = findExecutable(command, searchPath);
    if (found !== undefined) symlinkSync(found, join(dir, command));
  }
  return dir;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once('exit', () => {
    for (const dir of created) rmSync(dir, { recursive: true, force: true });
  });
}

/** The first executable called `name` on `searchPath`, or undefined. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  return searchPath
    .split(delimiter)
    .filter((entry) => entry !== '')
    .map((entry) => join(entry, name))
    .find(isExecutable);
}
