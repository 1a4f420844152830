import { memoryDriver } from '../backends/memory/index.js';
import { overlayDriver } from '../backends/overlay/index.js';
import { defaultMountPath } from '../sources/mount-path.js';
import type { HostMount } from '../sources/schema.js';
import { createWorkspace, type CreateWorkspaceOptions, type ManagedWorkspace } from '../workspace/create-workspace.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { displayPath, normalizePath } from '../workspace/paths.js';
import { composeDriver } from './factory.js';
import type { MountSpec } from './mount-table.js';

/**
 * What `createSession({ backend: 'overlay', mounts })` works on: each mount an overlay workspace over its
 * host directory at its mount path (its `include`/`exclude` hiding lower paths), nothing copied. One mount
 * at `/` is that overlay itself; otherwise the mounts are composed over an in-memory root. Every mount is
 * read-write in the workspace (a `readOnly` mount is one `writeBack` never writes, as when hydrated).
 * `maxBytes` has nothing to bound (nothing is copied); links are shown as links and followed inside the
 * mount's own directory only, whatever `followSymlinks` says. A mount of a single file is refused.
 */
export function overlayMounts(
  mounts: readonly HostMount[],
  allowedHostRoots: readonly string[],
  given: Pick<CreateWorkspaceOptions, 'limits' | 'protect' | 'audit'> = {},
): ManagedWorkspace {
  const overlays: MountSpec[] = [];
  const opened: ManagedWorkspace[] = [];
  // The audit records what the session's workspace does: the outer one, never each mount as well.
  const { audit: _outerOnly, ...options } = given;
  const single = mounts.length === 1 && normalizePath(mounts[0]?.mountPath ?? defaultMountPath(mounts[0]?.hostPath ?? '')) === '';
  try {
    for (const mount of mounts) {
      const path = normalizePath(mount.mountPath ?? defaultMountPath(mount.hostPath));
      if (overlays.some((other) => normalizePath(other.path) === path))
        throw new InvalidArgumentError(`two overlay mounts at ${displayPath(path)}: an overlay shows one directory per path`);
      const driver = overlayDriver({
        lower: mount.hostPath,
        allowedHostRoots,
        ...(mount.include === undefined ? {} : { include: mount.include }),
        ...(mount.exclude === undefined ? {} : { exclude: mount.exclude }),
        // Version-control internals stay hidden unless the mount asks for them (then read-only: the protect rule).
        ...(mount.includeGit === undefined ? {} : { includeGit: mount.includeGit }),
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
