import { MemoryWorkspace } from '../backends/memory/index.js';
import { OverlayWorkspace } from '../backends/overlay/index.js';
import { defaultMountPath } from '../sources/hydrate.js';
import { VERSION_CONTROL_GLOBS } from '../sources/plan.js';
import type { HostMount } from '../sources/schema.js';
import type { DriverWorkspace } from '../workspace/create-workspace.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import type { WorkspaceLimits } from '../workspace/limits.js';
import { displayPath, normalizePath } from '../workspace/paths.js';
import { composeWorkspace } from './index.js';
import type { MountSpec } from './mount-table.js';

/**
 * What `createSession({ backend: 'overlay', mounts })` works on: each mount an `OverlayWorkspace` over its
 * host directory at its mount path (its `include`/`exclude` hiding lower paths), nothing copied. One mount
 * at `/` is that overlay itself; otherwise the mounts are composed over an in-memory root. Every mount is
 * read-write in the workspace (a `readOnly` mount is one `writeBack` never writes, as when hydrated).
 * `maxBytes` has nothing to bound (nothing is copied); links are shown as links and followed inside the
 * mount's own directory only, whatever `followSymlinks` says. A mount of a single file is refused.
 */
export function overlayMounts(
  mounts: readonly HostMount[],
  allowedHostRoots: readonly string[],
  limits: Partial<WorkspaceLimits> | undefined,
  protect?: readonly string[],
): DriverWorkspace {
  const overlays: MountSpec[] = [];
  const opened: OverlayWorkspace[] = [];
  try {
    for (const mount of mounts) {
      const path = normalizePath(mount.mountPath ?? defaultMountPath(mount.hostPath));
      if (overlays.some((other) => normalizePath(other.path) === path))
        throw new InvalidArgumentError(`two overlay mounts at ${displayPath(path)}: an overlay shows one directory per path`);
      const workspace = new OverlayWorkspace({
        lower: mount.hostPath,
        allowedHostRoots,
        ...(mount.include === undefined ? {} : { include: mount.include }),
        // Version-control internals stay hidden unless the mount asks for them (then read-only: the protect rule).
        exclude: [...(mount.exclude ?? []), ...(mount.includeGit === 'read-only' ? [] : VERSION_CONTROL_GLOBS)],
        ...(limits === undefined ? {} : { limits }),
        ...(protect === undefined ? {} : { protect }),
      });
      opened.push(workspace);
      overlays.push({ path: displayPath(path), workspace, access: 'read-write' });
    }
    if (overlays.length === 1 && normalizePath(overlays[0]?.path) === '') return overlays[0]?.workspace as DriverWorkspace;
    const root = overlays.some((mount) => normalizePath(mount.path) === '')
      ? []
      : [
          {
            path: '/',
            workspace: new MemoryWorkspace({ limits, ...(protect === undefined ? {} : { protect }) }),
            access: 'read-write' as const,
          },
        ];
    return composeWorkspace({
      mounts: [...root, ...overlays],
      ...(limits === undefined ? {} : { limits }),
      ...(protect === undefined ? {} : { protect }),
    });
  } catch (error) {
    for (const workspace of opened) void workspace.dispose();
    throw error;
  }
}
