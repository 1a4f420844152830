import { memoryDriver } from '../backends/memory/index.js';
import { overlayDriver } from '../backends/overlay/index.js';
import { defaultSourcePath } from '../sources/source-path.js';
import type { HostSource } from '../sources/schema.js';
import { createWorkspace, type CreateWorkspaceOptions, type ManagedWorkspace } from '../workspace/create-workspace.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { displayPath, normalizePath } from '../workspace/paths.js';
import { composeDriver } from './factory.js';
import type { MountSpec } from './mount-table.js';

/**
 * What `createSession({ backend: 'overlay', sources })` works on: each host source an overlay workspace
 * over its host directory, mounted at the source's path (its `include`/`exclude` hiding lower paths),
 * nothing copied. One source at `/` is that overlay itself; otherwise the overlays are mounted over an
 * in-memory root. Every mount is read-write in the workspace (a `readOnly` source is one `writeBack` never
 * writes, as when hydrated). `maxBytes` has nothing to bound (nothing is copied), nor has `gitignore` (ignored
 * files are shown; the searches skip them unless asked); links are shown as links
 * and followed inside the source's own directory only, whatever `followSymlinks` says. A single-file
 * source is refused.
 */
export function overlayMounts(
  sources: readonly HostSource[],
  allowedHostRoots: readonly string[],
  given: Pick<CreateWorkspaceOptions, 'limits' | 'protect' | 'audit'> = {},
): ManagedWorkspace {
  const overlays: MountSpec[] = [];
  const opened: ManagedWorkspace[] = [];
  // The audit records what the session's workspace does: the outer one, never each mount as well.
  const { audit: _outerOnly, ...options } = given;
  const single = sources.length === 1 && normalizePath(sources[0]?.path ?? defaultSourcePath(sources[0]?.hostPath ?? '')) === '';
  try {
    for (const source of sources) {
      const path = normalizePath(source.path ?? defaultSourcePath(source.hostPath));
      if (overlays.some((other) => normalizePath(other.path) === path))
        throw new InvalidArgumentError(`two sources at ${displayPath(path)}: an overlay shows one directory per path`);
      const driver = overlayDriver({
        lower: source.hostPath,
        allowedHostRoots,
        ...(source.include === undefined ? {} : { include: source.include }),
        ...(source.exclude === undefined ? {} : { exclude: source.exclude }),
        // Version-control internals stay hidden unless the source asks for them (then read-only: the protect rule).
        ...(source.includeGit === undefined ? {} : { includeGit: source.includeGit }),
      });
      const workspace = createWorkspace(driver, single ? given : options);
      opened.push(workspace);
      overlays.push({ path: displayPath(path), workspace, access: 'read-write' });
    }
    if (overlays.length === 1 && normalizePath(overlays[0]?.path) === '') return opened[0] as ManagedWorkspace;
    const root = overlays.some((mount) => normalizePath(mount.path) === '')
      ? []
      : [{ path: '/', workspace: createWorkspace(memoryDriver(), options), access: 'read-write' as const }];
    return createWorkspace(composeDriver({ mounts: [...root, ...overlays] }), given);
  } catch (error) {
    for (const workspace of opened) void workspace.dispose();
    throw error;
  }
}
