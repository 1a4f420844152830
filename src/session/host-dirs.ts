import { realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OWNED_TEMP_PREFIX } from '../host-files/temp-prefix.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import type { SessionSettings } from './options.js';

/**
 * Host directories whose paths must never reach a model: the workspace's root and snapshot store when they
 * are host directories (any backend may have them: read structurally), the sources, the allowed roots, and
 * the places a stray error message is likely to name.
 *
 * Of the host's temp directory, only sessionfs's own directories in it (`sessionfs-*`: host roots and git
 * dirs it made, the sandbox's mirror and staging): the rest of it is no secret of this session's, and a
 * sandboxed program's own `/tmp` (its `$HOME`, what `mktemp` makes, a compiler's scratch files) has the same
 * name, so hiding all of `/tmp` turned every path the program printed there into `<host path>`. A host shell
 * hides the whole host temp directory from its own output (`shell/host-shell.ts`); a non-`WorkspaceError`
 * message has every absolute path hidden anyway.
 */
export function hostDirectories(settings: SessionSettings, workspace: SnapshotableWorkspace): string[] {
  const dirs = new Set<string>();
  const add = (dir: unknown, names = ''): void => {
    if (typeof dir !== 'string' || dir === '' || dir === '/') return;
    const under = (path: string): string => (names === '' ? path : join(path, names));
    dirs.add(under(resolve(dir)));
    try {
      // Also the real path (`/tmp` may be `/private/tmp`): messages from the kernel carry that one.
      dirs.add(under(realpathSync.native(dir)));
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
  add(tmpdir(), `${OWNED_TEMP_PREFIX}*`);
  add(homedir());
  add(process.cwd());
  return [...dirs];
}
