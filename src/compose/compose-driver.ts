import type {
  BackendDriver,
  DriverEntryKind,
  DriverListEntry,
  DriverStat,
  DriverWalkEntry,
  DriverWriteOptions,
} from '../workspace/driver.js';
import { FileNotFoundError, IsADirectoryError, PolicyError, ReadOnlyError } from '../workspace/errors.js';
import { displayPath, joinPath, pathDepth, relativeTo, type NormalizedPath } from '../workspace/paths.js';
import { ComposeSnapshotter } from './compose-snapshots.js';
import { kindIn, kindOf } from './mounted-kind.js';
import { inMount } from './mounted-errors.js';
import { assertLinksStayInMount, followInMount } from './mount-links.js';
import type { MountTable, Route } from './mount-table.js';

/** What a mutation does to the path it names, as access levels judge it. */
type Change = 'create' | 'append' | 'overwrite' | 'delete' | 'rename';

/**
 * The driver `composeDriver({ mounts })` makes: every primitive routed by longest prefix to a mounted workspace
 * (the path the mount sees is relative to its mount point, so no path can climb into another mount's
 * store), access levels checked before anything is changed, mount points shown as directories, and a link
 * never followed from one mount into another (see `assertLinksStayInMount`). Everything
 * else (path rules, preconditions, locking, glob and grep, limits) is the shared layer's, as for any driver.
 */
export class ComposeDriver implements BackendDriver {
  readonly name = 'compose';
  readonly snapshots: ComposeSnapshotter;
  readonly #table: MountTable;

  constructor(table: MountTable) {
    this.#table = table;
    this.snapshots = new ComposeSnapshotter(table);
  }

  /** The visible route of a path; ENOENT when it is hidden or no mount holds it. */
  #visible(path: NormalizedPath): Route {
    const route = this.#table.route(path);
    if (route === undefined || route.mount.access === 'disabled') throw new FileNotFoundError(displayPath(path));
    return route;
  }

  /** `route`, once the links on it (the final one when `followFinal`) are known to stay inside its mount. */
  async #staying(route: Route, followFinal: boolean): Promise<Route> {
    await assertLinksStayInMount(route, this.#table.nestedIn(route.mount), followFinal);
    return route;
  }

  /** Where an access to `path` lands, links followed inside its mount: what the policy and `protect` judge. */
  async resolve(path: NormalizedPath): Promise<NormalizedPath> {
    const route = this.#table.route(path);
    if (route === undefined || route.inner === '') return path;
    return joinPath(route.mount.path, await followInMount(route, this.#table.nestedIn(route.mount), true));
  }

  // ---- reading ----------------------------------------------------------------------------------------

  async readFile(path: NormalizedPath, range: { offset: number; length?: number }) {
    if (this.#table.isMountDirectory(path) && !this.#table.isHidden(path)) throw new IsADirectoryError(displayPath(path));
    const { mount, inner } = await this.#staying(this.#visible(path), true);
    const options = range.length === undefined ? { offset: range.offset } : { offset: range.offset, limit: range.length };
    const { content, sizeBytes } = await inMount(mount.path, () => mount.workspace.readBytes(inner, options));
    return { content, sizeBytes };
  }

  async kind(path: NormalizedPath): Promise<DriverEntryKind | undefined> {
    if (this.#table.isHidden(path)) return undefined;
    if (this.#table.isMountDirectory(path)) return 'directory';
    const route = this.#table.route(path);
    return route === undefined ? undefined : kindIn(await this.#staying(route, false));
  }

  async stat(path: NormalizedPath): Promise<DriverStat> {
    if (this.#table.isMountDirectory(path) && !this.#table.isHidden(path)) {
      const route = this.#table.route(path);
      if (route !== undefined && route.inner === '') return this.#innerStat(route);
      return { isFile: false, isDirectory: true, isSymlink: false, sizeBytes: 0 };
    }
    return this.#innerStat(await this.#staying(this.#visible(path), true));
  }

  async #innerStat({ mount, inner }: Route): Promise<DriverStat> {
    const { path: _shown, linkTarget: _readByTheSharedLayer, ...stat } = await inMount(mount.path, () => mount.workspace.stat(inner));
    return stat;
  }

  async readlink(path: NormalizedPath): Promise<string> {
    const { mount, inner } = await this.#staying(this.#visible(path), false);
    return inMount(mount.path, () => mount.workspace.readlink(inner));
  }

  async list(path: NormalizedPath): Promise<DriverListEntry[]> {
    const { visible, hidden } = this.#table.childrenOf(path);
    let own: DriverListEntry[] = [];
    try {
      const { mount, inner } = await this.#staying(this.#visible(path), true);
      own = (await inMount(mount.path, () => mount.workspace.list(inner))).map((entry) => ({ name: entry.name, kind: kindOf(entry) }));
    } catch (error) {
      // A directory only the mount table makes (no mount holds it, or the mount has no such directory).
      if (!this.#table.isMountDirectory(path)) throw error;
    }
    const entries = own.filter((entry) => !visible.has(entry.name) && !hidden.has(entry.name));
    for (const name of visible) entries.push({ name, kind: 'directory' });
    return entries;
  }

  /** Through the composed listing, so a walk crosses mount points and never sees a disabled mount. */
  async *walk(base: NormalizedPath): AsyncIterable<DriverWalkEntry> {
    for (const entry of await this.list(base)) {
      const path = joinPath(base, entry.name);
      yield { path, kind: entry.kind };
      if (entry.kind === 'directory') yield* this.walk(path);
    }
  }

  // ---- writing ----------------------------------------------------------------------------------------

  /**
   * The route of a path about to change, once the mount's access level allows the change and the links on
   * it stay inside the mount (the final one when the change goes through it).
   */
  async #admit(path: NormalizedPath, change: Change, followFinal = false): Promise<Route> {
    const shown = displayPath(path);
    const route = this.#table.route(path);
    if (route === undefined) throw new ReadOnlyError(shown, `no mount holds ${shown}; outside its mounts the workspace is read-only`);
    const { mount } = route;
    if (mount.access === 'disabled') throw new FileNotFoundError(shown);
    if (mount.access === 'read-only') throw new ReadOnlyError(shown, `the mount at ${displayPath(mount.path)} is read-only: ${shown}`);
    if (mount.access === 'append-only' && (change === 'overwrite' || change === 'delete' || change === 'rename'))
      throw new PolicyError(`the mount at ${displayPath(mount.path)} is append-only: cannot ${change} ${shown}`, shown);
    return this.#staying(route, followFinal);
  }

  /** A change to something at or above a mount point would change the mount table itself. */
  #assertNoMountPoint(path: NormalizedPath, verb: string): void {
    const inside = this.#table.mountPointsWithin(path)[0];
    if (inside !== undefined)
      throw new PolicyError(`cannot ${verb} ${displayPath(path)}: the mount point ${displayPath(inside.path)} is there`, displayPath(path));
  }

  async #replacing(path: NormalizedPath): Promise<Change> {
    return (await this.kind(path)) === undefined ? 'create' : 'overwrite';
  }

  async writeFile(path: NormalizedPath, bytes: Uint8Array, options: DriverWriteOptions): Promise<void> {
    const change = options.mode === 'overwrite' ? await this.#replacing(path) : options.mode;
    const { mount, inner } = await this.#admit(path, change, true);
    const write = {
      mode: options.mode,
      createParents: false,
      ...(options.mimeType === undefined ? {} : { mimeType: options.mimeType }),
      ...(options.executable === undefined ? {} : { executable: options.executable }),
    };
    await inMount(mount.path, () => mount.workspace.writeBytes(inner, bytes, write));
  }

  /** The mount answers for its own kinds: a mount without executable bits says `NotSupportedError`. */
  async setExecutable(path: NormalizedPath, executable: boolean): Promise<void> {
    const { mount, inner } = await this.#admit(path, 'overwrite', true);
    await inMount(mount.path, () => mount.workspace.setExecutable(inner, executable));
  }

  /** The target is data, stored by the mount as given; it is followed later only inside that mount. */
  async symlink(target: string, path: NormalizedPath): Promise<void> {
    const { mount, inner } = await this.#admit(path, 'create');
    await inMount(mount.path, () => mount.workspace.symlink(target, inner));
  }

  async mkdir(path: NormalizedPath): Promise<void> {
    if (this.#table.isMountDirectory(path)) return;
    const { mount, inner } = await this.#admit(path, 'create', true);
    await inMount(mount.path, () => mount.workspace.mkdir(inner, { parents: true, existOk: true }));
  }

  async remove(path: NormalizedPath, options: { recursive: boolean }): Promise<void> {
    this.#assertNoMountPoint(path, 'delete');
    const { mount, inner } = await this.#admit(path, 'delete');
    await inMount(mount.path, () => mount.workspace.delete(inner, options));
  }

  async move(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    this.#assertNoMountPoint(from, 'rename');
    this.#assertNoMountPoint(to, 'replace');
    const source = await this.#admit(from, 'rename');
    const target = await this.#admit(to, await this.#replacing(to));
    if (source.mount === target.mount) {
      await inMount(source.mount.path, () => source.mount.workspace.rename(source.inner, target.inner, { overwrite: true }));
      return;
    }
    // Across mounts a rename is a copy and a delete; a snapshot spanning both mounts undoes them together.
    await this.#copyAcross(from, to, target);
    await inMount(source.mount.path, () => source.mount.workspace.delete(source.inner, { recursive: true }));
  }

  async copy(from: NormalizedPath, to: NormalizedPath): Promise<void> {
    this.#assertNoMountPoint(to, 'replace');
    const source = await this.#staying(this.#visible(from), false);
    const target = await this.#admit(to, await this.#replacing(to));
    if (source.mount === target.mount && this.#table.mountPointsWithin(from).length === 0) {
      await inMount(source.mount.path, () => source.mount.workspace.copy(source.inner, target.inner, { overwrite: true, recursive: true }));
      return;
    }
    await this.#copyAcross(from, to, target);
  }

  /**
   * Copies entry by entry through the composed tree into one target mount (no mount point lies at or below
   * `to`, so every destination routes there): links as links (their target text, followed later inside the
   * target mount only), files with their executable bit. A failed copy (a target mount without links or
   * executable bits: `NotSupportedError`) removes what it created.
   */
  async #copyAcross(from: NormalizedPath, to: NormalizedPath, target: Route): Promise<void> {
    const sourceKind = await this.kind(from);
    const entries: DriverWalkEntry[] = [{ path: from, kind: sourceKind ?? 'file' }];
    if (sourceKind === 'directory') for await (const entry of this.walk(from)) entries.push(entry);
    entries.sort((a, b) => pathDepth(a.path) - pathDepth(b.path));
    const { mount, workspace } = { mount: target.mount, workspace: target.mount.workspace };
    const replaced = await this.kind(to);
    const existed = replaced !== undefined;
    // What is replaced goes first unless bytes simply overwrite a file (a link there is replaced, never written through).
    if (existed && (sourceKind !== 'file' || replaced !== 'file'))
      await inMount(mount.path, () => workspace.delete(target.inner, { recursive: true }));
    try {
      for (const entry of entries) {
        const inner = entry.path === from ? target.inner : joinPath(target.inner, relativeTo(entry.path, from));
        if (entry.kind === 'directory') await inMount(mount.path, () => workspace.mkdir(inner, { parents: true, existOk: true }));
        else if (entry.kind === 'symlink') {
          const linkTarget = await this.readlink(entry.path);
          await inMount(mount.path, () => workspace.symlink(linkTarget, inner));
        } else {
          const { content } = await this.readFile(entry.path, { offset: 0 });
          const executable = (await this.stat(entry.path)).executable === true;
          const write = { mode: 'overwrite' as const, createParents: false, ...(executable ? { executable } : {}) };
          await inMount(mount.path, () => workspace.writeBytes(inner, content, write));
        }
      }
    } catch (error) {
      if (!existed) await workspace.delete(target.inner, { recursive: true }).catch(() => undefined);
      throw error;
    }
  }

  async dispose(): Promise<void> {
    const owned = new Set(this.#table.mounts.map((mount) => mount.workspace));
    for (const workspace of owned) await (workspace as { dispose?: () => Promise<void> }).dispose?.();
  }
}
