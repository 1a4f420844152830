import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createSession } from '../session/index.js';
import type { HydrateProgress } from '../sources/index.js';
import type { WorkspaceLimits } from '../workspace/limits.js';
import type { SkippedPath, SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { defaultSourcePath } from '../sources/source-path.js';
import { displayPath, joinPath, normalizePath, type NormalizedPath } from '../workspace/paths.js';
import { UsageError, type MountArgument } from './args.js';
import type { ServeSession } from './served-session.js';
import type { StoreFlags } from './store-flags.js';

/** What `sessionfs mcp` asks of its session, from the flags. */
export interface ServeSessionOptions {
  backend: 'memory' | 'host' | 'overlay';
  /** No backend was chosen: see {@link chooseBackend}. */
  lazyMounts?: boolean;
  root?: string;
  mounts: readonly MountArgument[];
  allow: readonly string[];
  readOnly: boolean;
  shell?: true | 'host' | 'sandbox';
  limits?: Partial<WorkspaceLimits>;
  signal: AbortSignal;
  onProgress: (progress: HydrateProgress) => void;
  /** `--session NAME`: the stored session of that name, from `store` (seeded from the mounts when new; no root: see args.ts). */
  session?: string;
  store?: StoreFlags;
}

export type { ServeSession } from './served-session.js';

/**
 * The session `sessionfs mcp` serves. Most flags map to `createSession` as they are. Two cannot, because
 * a session copies every mount into one workspace: a `:ro` mount would be writable there (read-only only at
 * write-back), and with `--root` the mounts would be copied into the real root and left there. Then the
 * server makes its own mount table ({@link composedSession}): each directory mount is a workspace of its
 * own at its mount path (read-only for `:ro`), beside the root.
 */
export async function openServeSession(given: ServeSessionOptions): Promise<ServeSession> {
  if (given.session !== undefined && given.store !== undefined) {
    const { openStoredServeSession } = await import('./stored-serve-session.js');
    return openStoredServeSession({
      session: given.session,
      store: given.store,
      readOnly: given.readOnly,
      ...(given.limits === undefined ? {} : { limits: given.limits }),
      ...(given.mounts.length === 0
        ? {}
        : { seed: { sources: given.mounts.map((mount) => ({ ...mount })), allowedHostRoots: [...given.allow] } }),
      signal: given.signal,
      onProgress: given.onProgress,
    });
  }
  const options = { ...given, backend: await chooseBackend(given) };
  if (options.mounts.some((mount) => mount.readOnly === true) || (options.root !== undefined && options.mounts.length > 0))
    return composedSession(options);
  const session = await createSession({
    backend: options.backend,
    ...(options.root === undefined ? {} : { root: options.root }),
    sources: options.mounts.map((mount) => ({ ...mount })),
    allowedHostRoots: [...options.allow],
    readOnly: options.readOnly,
    rollback: rollbackFor(options),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    signal: options.signal,
    onProgress: options.onProgress,
  });
  return { session, writeBack: (writeOptions) => session.writeBack(writeOptions), hostDirs: [], dispose: () => session.dispose() };
}

/**
 * The backend when none was chosen (`lazyMounts`): mounts that are all directories, none with a byte budget,
 * are shown in place (the overlay: the first call comes at once however big they are) rather than copied
 * into memory first. A file mount (which an overlay cannot show) or a `--max-bytes` (a budget of the copy)
 * keeps the copy; so does a mount that cannot be read, which the hydration then reports as before.
 */
async function chooseBackend(options: ServeSessionOptions): Promise<ServeSessionOptions['backend']> {
  // A budget (`--max-bytes`) or `--include-ignored` is about copying: those mounts are copied, not shown in place.
  const copying = options.mounts.some((mount) => mount.maxBytes !== undefined || mount.gitignore === false);
  if (options.lazyMounts !== true || options.mounts.length === 0 || copying) return options.backend;
  const directories = await Promise.all(
    options.mounts.map((mount) =>
      stat(mount.hostPath).then(
        (found) => found.isDirectory(),
        () => false,
      ),
    ),
  );
  return directories.every(Boolean) ? 'overlay' : options.backend;
}

/** A memory snapshot is O(1); a host root's costs a walk, so a call records what it changes instead (not with a shell). */
function rollbackFor(options: ServeSessionOptions): 'snapshot' | 'journal' {
  return options.backend === 'memory' || options.shell !== undefined ? 'snapshot' : 'journal';
}

interface PlannedMount {
  mount: MountArgument;
  path: NormalizedPath;
  /** A directory mount is a workspace of its own; a file mount is copied into the workspace holding its path. */
  directory: boolean;
}

/**
 * The mount table: the root (`--root`, or a fresh workspace of the backend) at `/`, and each directory
 * mount as its own workspace at its mount path, `read-only` for `:ro` (a model's write there is `EROFS`).
 * A `:ro` mount is copied into its workspace before it is sealed into the table; the other mounts are copied
 * (or, with `--overlay`, shown) through the table, so they land in their own workspaces, never in the root.
 * What the user asked for that cannot hold this way is a usage error, before anything is made.
 */
async function composedSession(options: ServeSessionOptions): Promise<ServeSession> {
  const planned = await planMounts(options);
  const [{ composeDriver }, { hydrate }, { memoryDriver }, { createWorkspace }] = await Promise.all([
    import('../compose/index.js'),
    import('../sources/hydrate.js'),
    import('../backends/memory/index.js'),
    import('../workspace/create-workspace.js'),
  ]);
  const limits = options.limits === undefined ? {} : { limits: options.limits };
  const hostDirs: string[] = [];
  const made: { dispose(): Promise<void> }[] = [];
  const fresh = async (): Promise<SnapshotableWorkspace> => {
    if (options.backend !== 'host') return createWorkspace(memoryDriver(), limits);
    const { hostDriver } = await import('../backends/host/index.js');
    const driver = hostDriver({ changeDetection: 'tracked' });
    hostDirs.push(driver.root, driver.gitDir);
    return createWorkspace(driver, limits);
  };
  const progress = cumulative(options.onProgress);
  const hydrateOptions = { allowedHostRoots: [...options.allow], onProgress: progress.onProgress, signal: options.signal };
  const skipped: SkippedPath[] = [];
  let composed: SnapshotableWorkspace | undefined;
  try {
    const table: { path: string; workspace: SnapshotableWorkspace; access: 'read-write' | 'read-only' }[] = [];
    for (const { mount, path, directory } of planned) {
      if (!directory) continue;
      let workspace: SnapshotableWorkspace;
      if (options.backend === 'overlay') {
        const { overlayDriver } = await import('../backends/overlay/index.js');
        const driver = overlayDriver({
          lower: mount.hostPath,
          allowedHostRoots: [...options.allow],
          ...(mount.include === undefined ? {} : { include: mount.include }),
          ...(mount.exclude === undefined ? {} : { exclude: mount.exclude }),
        });
        workspace = createWorkspace(driver, limits);
      } else workspace = await fresh();
      made.push(workspace);
      if (mount.readOnly === true && options.backend !== 'overlay') {
        const result = await hydrate(workspace, [{ ...mount, path: '/' }], hydrateOptions);
        const at = (inner: NormalizedPath): string => displayPath(inner === '' ? path : joinPath(path, inner));
        skipped.push(...result.skipped.map((entry) => ({ ...entry, path: at(normalizePath(entry.path)) })));
        progress.next();
      }
      table.push({ path: displayPath(path), workspace, access: mount.readOnly === true ? 'read-only' : 'read-write' });
    }
    if (!table.some((entry) => entry.path === '/')) {
      let root: SnapshotableWorkspace;
      if (options.root === undefined) root = await fresh();
      else {
        const { hostDriver } = await import('../backends/host/index.js');
        // Read-only from the start under --read-only: nothing is copied into the root, and a writable workspace
        // would sweep killed writers' temp files from it when it opens.
        const driver = hostDriver({ root: options.root, changeDetection: 'scan' });
        hostDirs.push(driver.gitDir);
        root = createWorkspace(driver, { readOnly: options.readOnly, ...limits });
      }
      made.push(root);
      table.push({ path: '/', workspace: root, access: 'read-write' });
    }
    composed = createWorkspace(composeDriver({ mounts: table }), limits);
    made.length = 0; // the composition owns them now
    const copied = planned.filter((p) => p.mount.readOnly !== true && (p.directory ? options.backend !== 'overlay' : true));
    if (copied.length > 0)
      skipped.push(
        ...(
          await hydrate(
            composed,
            copied.map((p) => ({ ...p.mount })),
            hydrateOptions,
          )
        ).skipped,
      );
    progress.next();
    let baseline: WorkspaceSnapshot | undefined = await composed.snapshot({ tag: 'sessionfs mcp hydrated' });
    const session = await createSession({ workspace: composed, readOnly: options.readOnly, rollback: rollbackFor(options) });
    const workspace = composed;
    const writable = options.mounts.filter((mount) => mount.readOnly !== true).map((mount) => ({ ...mount }));
    return {
      session,
      skipped,
      hostDirs,
      async writeBack(writeOptions) {
        const { writeBackToSources } = await import('../export/write-back.js');
        // Through session.filesystem: it waits for the calls before it, as the session's own writeBack does.
        const done = await writeBackToSources(session.filesystem, writable, options.allow, baseline, writeOptions);
        if (done.baseline !== undefined) baseline = done.baseline;
        return done.result;
      },
      async dispose() {
        await session.dispose().catch(() => undefined);
        await workspace.dispose();
      },
    };
  } catch (error) {
    for (const workspace of made) await workspace.dispose().catch(() => undefined);
    await composed?.dispose().catch(() => undefined);
    throw error;
  }
}

/** Checks the mounts against what a mount table can hold; a usage error names the flag and the value given. */
async function planMounts(options: ServeSessionOptions): Promise<PlannedMount[]> {
  const given = (mount: MountArgument): string =>
    JSON.stringify(`${mount.hostPath}${mount.path === undefined ? '' : `:${mount.path}`}${mount.readOnly === true ? ':ro' : ''}`);
  if (options.shell === 'host')
    throw new UsageError(
      `--shell-host runs real programs in the root directory, and with ${options.root === undefined ? 'a :ro --mount' : '--root and --mount'} the mounts are not in it: drop one of them`,
    );
  const planned: PlannedMount[] = [];
  for (const mount of options.mounts) {
    const path = normalizePath(mount.path ?? defaultSourcePath(mount.hostPath));
    // A path that cannot be read is taken for a directory: copying or showing it then says what is wrong.
    const directory = await stat(mount.hostPath).then(
      (found) => found.isDirectory(),
      () => true,
    );
    if (!directory && options.backend === 'overlay')
      throw new UsageError(`--mount ${given(mount)} is a file: --overlay shows directories only`);
    if (!directory && mount.readOnly === true)
      throw new UsageError(`--mount ${given(mount)}: a :ro mount must be a directory (a single file cannot be mounted read-only)`);
    if (options.root !== undefined) {
      if (!directory)
        throw new UsageError(`--mount ${given(mount)} is a file: with --root only directories can be mounted beside the root`);
      if (path === '') throw new UsageError(`--mount ${given(mount)} would cover --root ${JSON.stringify(options.root)}: give it a path`);
      const taken = await lstat(join(options.root, path)).then(
        () => true,
        () => false,
      );
      if (taken)
        throw new UsageError(
          `--mount ${given(mount)} shows at ${displayPath(path)}, which --root ${JSON.stringify(options.root)} already holds: give it another path (SRC:/other)`,
        );
    }
    const twin = planned.find((other) => other.directory && directory && other.path === path);
    if (twin !== undefined)
      throw new UsageError(
        `--mount ${given(twin.mount)} and --mount ${given(mount)} both show at ${displayPath(path)}: give each its own path`,
      );
    planned.push({ mount, path, directory });
  }
  return planned;
}

/** One progress count over several hydrations: each starts from where the one before ended. */
function cumulative(onProgress: (progress: HydrateProgress) => void) {
  let base = { files: 0, bytes: 0 };
  let last = base;
  return {
    onProgress(progress: HydrateProgress): void {
      last = { files: base.files + progress.files, bytes: base.bytes + progress.bytes };
      const total = progress.total === undefined ? {} : { total: base.files + progress.total };
      onProgress({ ...progress, ...last, done: last.files, ...total });
    },
    /** The next hydration counts on from here. */
    next(): void {
      base = last;
    },
  };
}
