import { realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import type { SessionSettings } from './options.js';

/**
 * Host directories whose paths must never reach a model: the workspace's root and snapshot store when they
 * are host directories (any backend may have them: read structurally), the sources, the allowed roots, and
 * the places a stray error message is likely to name.
 */
export function hostDirectories(settings: SessionSettings, workspace: SnapshotableWorkspace): string[] {
  const dirs = new Set<string>();
  const add = (dir: unknown): void => {
    if (typeof dir !== 'string' || dir === '' || dir === '/') return;
    dirs.add(resolve(dir));
    try {
      // Also the real path (`/tmp` may be `/private/tmp`): messages from the kernel carry that one.
      dirs.add(realpathSync.native(dir));
    } catch {
      // missing: its given form is enough
    }
  };
  if (settings.origin.kind === 'backend') {
    add(settings.origin.settings.root);
    add(settings.origin.settings.gitDir);
  }
  if (settings.origin.kind === 'namespace') add(settings.origin.namespace.dir);
  add(workspace.root);
  add((workspace as { gitDir?: unknown }).gitDir);
  for (const root of settings.allowedHostRoots) add(root);
  for (const source of settings.sources) add(source.hostPath);
  add(tmpdir());
  add(homedir());
  add(process.cwd());
  return [...dirs];
}
