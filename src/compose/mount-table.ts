import { memoryDriver } from '../backends/memory/index.js';
import { createWorkspace } from '../workspace/create-workspace.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { displayPath, isSameOrInside, normalizePath, relativeTo, splitPath, type NormalizedPath } from '../workspace/paths.js';
import type { ProtocolMethod } from '../workspace/protocol-methods.js';
import type { SnapshotableWorkspace, Workspace } from '../workspace/types.js';

/**
 * What a mount lets callers do. `read-write`: everything. `read-only`: reads; mutations raise
 * `ReadOnlyError`. `append-only`: reads, creating files and directories, appending; overwriting, deleting
 * and renaming raise `PolicyError`. `disabled`: nothing; the mount and everything below it are invisible
 * (`ENOENT`), never listed or searched, and never fall through to the mount above.
 */
export type MountAccess = 'read-write' | 'read-only' | 'append-only' | 'disabled';

export const MOUNT_ACCESS_LEVELS: readonly MountAccess[] = ['read-write', 'read-only', 'append-only', 'disabled'];

export interface MountSpec {
  /** Where the mount appears, `/` for the root; normalised like any workspace path. */
  path: string;
  /** What is mounted. Omitted: a fresh memory workspace (a scratch area). Not needed for `disabled`. */
  workspace?: Workspace;
  access: MountAccess;
}

export interface Mount {
  path: NormalizedPath;
  access: MountAccess;
  workspace: Workspace;
}

/** A routed path: the mount holding it and the path inside that mount's workspace. */
export interface Route {
  mount: Mount;
  inner: NormalizedPath;
}

const WORKSPACE_METHODS = [
  'read',
  'readBytes',
  'writeBytes',
  'stat',
  'list',
  'mkdir',
  'delete',
  'rename',
  'copy',
  'setExecutable',
  'symlink',
  'readlink',
] as const satisfies readonly ProtocolMethod[];

/** Whether a workspace takes part in snapshots (it has snapshot, restore, diff and snapshotTree). */
export function isSnapshotable(workspace: Workspace): workspace is SnapshotableWorkspace {
  const candidate = workspace as Partial<SnapshotableWorkspace>;
  return (['snapshot', 'restore', 'diff', 'snapshotTree'] as const).every((method) => typeof candidate[method] === 'function');
}

/**
 * The mount table: longest-prefix routing, and the directories mounts make visible (every mount point and
 * its ancestors, except under a disabled mount). Validated once at construction.
 */
export class MountTable {
  /** Longest path first, so the first prefix match is the longest. */
  readonly mounts: readonly Mount[];
  readonly #visibleDirectories = new Set<NormalizedPath>();
  readonly #nested = new Map<Mount, NormalizedPath[]>();

  constructor(specs: readonly MountSpec[]) {
    if (!Array.isArray(specs) || specs.length === 0) throw new InvalidArgumentError('mounts must be a non-empty array');
    const mounts = specs.map(toMount);
    const seen = new Set<NormalizedPath>();
    for (const mount of mounts) {
      if (seen.has(mount.path)) throw new InvalidArgumentError(`two mounts at ${displayPath(mount.path)}`, displayPath(mount.path));
      seen.add(mount.path);
    }
    this.mounts = [...mounts].sort((a, b) => b.path.length - a.path.length);
    for (const mount of mounts) {
      const above = this.mounts.find((other) => other !== mount && isSameOrInside(mount.path, other.path) && other.access === 'disabled');
      if (above !== undefined)
        throw new InvalidArgumentError(
          `mount ${displayPath(mount.path)} lies inside the disabled mount ${displayPath(above.path)}`,
          displayPath(mount.path),
        );
      const nested = this.mounts.filter((other) => other !== mount && isSameOrInside(other.path, mount.path));
      this.#nested.set(
        mount,
        nested.map((other) => relativeTo(other.path, mount.path)),
      );
      if (mount.access === 'disabled') continue;
      const segments = splitPath(mount.path);
      for (let depth = 0; depth <= segments.length; depth += 1) this.#visibleDirectories.add(segments.slice(0, depth).join('/'));
    }
  }

  /** The mount holding `path` by longest prefix; `undefined` when no mount covers it. */
  route(path: NormalizedPath): Route | undefined {
    const mount = this.mounts.find((candidate) => isSameOrInside(path, candidate.path));
    return mount === undefined ? undefined : { mount, inner: relativeTo(path, mount.path) };
  }

  /** The mount points nested inside `mount` (any access), relative to it: the parts of its tree the composition shadows. */
  nestedIn(mount: Mount): readonly NormalizedPath[] {
    return this.#nested.get(mount) ?? [];
  }

  /** A directory the mount table itself makes visible (a mount point or one of its ancestors). */
  isMountDirectory(path: NormalizedPath): boolean {
    return this.#visibleDirectories.has(path);
  }

  /** Whether `path` is invisible: inside a disabled mount. */
  isHidden(path: NormalizedPath): boolean {
    return this.route(path)?.mount.access === 'disabled';
  }

  /** Names directly under `directory` that mounts make visible, and those disabled mounts hide. */
  childrenOf(directory: NormalizedPath): { visible: Set<string>; hidden: Set<string> } {
    const visible = new Set<string>();
    const hidden = new Set<string>();
    const depth = splitPath(directory).length;
    for (const path of this.#visibleDirectories) {
      if (path !== directory && isSameOrInside(path, directory)) visible.add(splitPath(path)[depth] as string);
    }
    for (const mount of this.mounts) {
      if (mount.access === 'disabled' && splitPath(mount.path).length === depth + 1 && isSameOrInside(mount.path, directory))
        hidden.add(splitPath(mount.path)[depth] as string);
    }
    return { visible, hidden };
  }

  /** Mount points at or below `path` (other than the one `path` itself is routed to when it lies inside it). */
  mountPointsWithin(path: NormalizedPath): Mount[] {
    return this.mounts.filter((mount) => mount.path !== '' && isSameOrInside(mount.path, path));
  }
}

function toMount(spec: MountSpec, index: number): Mount {
  if (spec === null || typeof spec !== 'object') throw new InvalidArgumentError(`mounts[${index}] must be an object`);
  const path = normalizePath(spec.path);
  if (!MOUNT_ACCESS_LEVELS.includes(spec.access))
    throw new InvalidArgumentError(
      `mounts[${index}].access must be one of ${MOUNT_ACCESS_LEVELS.join(', ')}, got ${String(spec.access)}`,
      displayPath(path),
    );
  const workspace = spec.workspace ?? createWorkspace(memoryDriver());
  for (const method of WORKSPACE_METHODS) {
    if (typeof (workspace as unknown as Record<string, unknown>)[method] !== 'function')
      throw new InvalidArgumentError(`mounts[${index}].workspace is not a Workspace (it lacks ${method}())`, displayPath(path));
  }
  if (spec.access === 'read-write' && !isSnapshotable(workspace))
    throw new InvalidArgumentError(
      `a read-write mount needs a workspace that takes snapshots (snapshot, restore, diff, snapshotTree), so that rollback covers it: ${displayPath(path)}`,
      displayPath(path),
    );
  return { path, access: spec.access, workspace };
}
