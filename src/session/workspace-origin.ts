import { createWorkspace } from '../workspace/create-workspace.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import type { BackendSettings, SessionSettings } from './options.js';

/** Why a session lets go of a workspace. */
export type CloseReason = 'reset' | 'dispose' | 'failed';

/**
 * Where a session's workspace comes from and what letting go of it means: the one place that differs
 * between a built-in backend (the session creates and disposes its workspaces) and a given workspace (the
 * caller's, which the session only borrows).
 */
export interface WorkspaceOrigin {
  /** Whether `open()` returns a workspace already showing the sources (an overlay), so nothing is hydrated. */
  readonly showsSources: boolean;
  /** The workspace as it is before hydration. */
  open(): Promise<SnapshotableWorkspace>;
  /** Lets go of `workspace`. For `reset`, throws before changing anything when the workspace cannot go back. */
  close(workspace: SnapshotableWorkspace, reason: CloseReason): Promise<void>;
  /**
   * Resolves once the workspace `open()` returned may change: its state before any change is recorded. Reads
   * need not wait. Rejects when that record could not be made (nothing may change then).
   */
  ready?(): Promise<void>;
}

export function workspaceOrigin(settings: SessionSettings): WorkspaceOrigin {
  const origin = settings.origin;
  if (origin.kind === 'given') return new GivenWorkspace(origin.workspace, settings.id);
  if (origin.kind === 'namespace') return new UserWorkspace(origin.namespace.open(origin.user), settings.id);
  return new BuiltInBackend(origin.settings, settings);
}

/**
 * A caller's workspace: `reset` restores the snapshot taken when the session first opened it, and the
 * session never disposes it. A workspace sealed by a read-only session cannot be restored, so cannot reset.
 */
class GivenWorkspace implements WorkspaceOrigin {
  readonly showsSources = false;
  #baseline: WorkspaceSnapshot | undefined;
  #opened = false;

  constructor(
    readonly workspace: SnapshotableWorkspace,
    readonly sessionId: string,
  ) {}

  async open(): Promise<SnapshotableWorkspace> {
    if (!this.#opened && !this.workspace.readOnly) {
      this.#baseline = await this.workspace.snapshot({ tag: `session ${this.sessionId} baseline` });
    }
    this.#opened = true;
    return this.workspace;
  }

  async close(workspace: SnapshotableWorkspace, reason: CloseReason): Promise<void> {
    if (reason !== 'reset' || this.#baseline === undefined) return;
    if (workspace.readOnly) {
      throw new InvalidArgumentError(
        `session ${this.sessionId} cannot be reset: it sealed the workspace it was given (read-only), so the workspace cannot go back to how it was; create a new session over a new workspace`,
      );
    }
    await workspace.restore(this.#baseline);
  }
}

/**
 * A user's persistent workspace in a namespace: as a given workspace (`reset` goes back to how the session
 * found it), but the session opened it, so it disposes it when done (its files and history stay).
 */
class UserWorkspace extends GivenWorkspace {
  override async close(workspace: SnapshotableWorkspace, reason: CloseReason): Promise<void> {
    await super.close(workspace, reason);
    if (reason !== 'reset') await workspace.dispose();
  }
}

/**
 * `backend: 'memory' | 'host' | 'overlay'`: a new workspace per `open()`, disposed on close. An overlay
 * workspace already shows the sources (see `overlayMounts`), so the session does not hydrate it.
 */
class BuiltInBackend implements WorkspaceOrigin {
  /** Given host root only: the root as it was before hydration, which `reset()` goes back to. */
  #baseline: WorkspaceSnapshot | undefined;
  /** Given host root only: the baseline being taken. */
  #taking: Promise<void> | undefined;
  /** Stops a baseline still being taken when the session goes away (nothing would ever restore it). */
  #stopBaseline: AbortController | undefined;

  readonly sessionId: string;
  readonly showsSources: boolean;

  constructor(
    readonly settings: BackendSettings,
    readonly session: SessionSettings,
  ) {
    this.sessionId = session.id;
    this.showsSources = settings.backend === 'overlay';
  }

  async open(): Promise<SnapshotableWorkspace> {
    const settings = this.settings;
    const audit = {
      ...(settings.audit === undefined ? {} : { audit: settings.audit }),
      ...(settings.policy === undefined ? {} : { policy: settings.policy }),
      ...(settings.protect === undefined ? {} : { protect: settings.protect }),
    };
    // Each backend's modules load when a session first opens one: a server on one backend starts without
    // loading the others (the host backend and the composition are a third of the modules `sessionfs mcp` loads).
    const limits = settings.limits === undefined ? {} : { limits: settings.limits };
    if (settings.backend === 'memory') {
      const { memoryDriver } = await import('../backends/memory/index.js');
      return createWorkspace(memoryDriver(), { ...limits, ...audit });
    }
    if (settings.backend === 'overlay') {
      const { overlayMounts } = await import('../compose/overlay-mounts.js');
      const { audit: sinks, protect } = settings;
      return overlayMounts(this.session.sources, this.session.allowedHostRoots, {
        ...limits,
        ...(protect === undefined ? {} : { protect }),
        ...(sinks === undefined ? {} : { audit: sinks }),
      });
    }
    const { hostDriver } = await import('../backends/host/index.js');
    const driver = hostDriver({
      ...(settings.root === undefined ? {} : { root: settings.root }),
      ...(settings.gitDir === undefined ? {} : { gitDir: settings.gitDir }),
      ...(settings.exclude === undefined ? {} : { exclude: settings.exclude }),
      // A root the session creates is written only through the workspace (handlers touch files through
      // context.filesystem; hostExec marks a scan), so it can trust its own dirty set: a snapshot per call
      // then costs O(changes). A root the caller gives may be written by anyone: scan.
      changeDetection: settings.changeDetection ?? (settings.root === undefined ? 'tracked' : 'scan'),
    });
    const workspace = createWorkspace(driver, {
      ...limits,
      // Read-only from the start when nothing is hydrated into it: a read-only session's root is left as it
      // is (a writable workspace removes killed writers' temp files from a given root when it opens).
      ...(this.session.readOnly && this.session.sources.length === 0 ? { readOnly: true } : {}),
      ...audit,
    });
    if (settings.root === undefined) return workspace;
    // Taken while the session answers its first reads: on a big root it hashes every file (seconds at 10k
    // files), and only a change must wait for it (see `ready`; the session holds every change until then).
    this.#baseline = undefined;
    this.#stopBaseline = new AbortController();
    const signal = this.#stopBaseline.signal;
    this.#taking = workspace.snapshot({ tag: `session ${this.sessionId} baseline`, signal }).then((baseline) => {
      this.#baseline = baseline;
    });
    this.#taking.catch(() => undefined);
    return workspace;
  }

  ready(): Promise<void> {
    return this.#taking ?? Promise.resolve();
  }

  async close(workspace: SnapshotableWorkspace, reason: CloseReason): Promise<void> {
    // A given host root outlives its workspace object: put it back as it was before the first hydration.
    if (reason === 'reset') await this.#taking;
    if (reason === 'reset' && this.#baseline !== undefined) await this.#restoreBaseline(workspace, this.#baseline);
    // Disposed after the baseline settles, which is taken from this workspace; a dispose does not wait for
    // the rest of a big root's scan.
    if (reason !== 'reset') this.#stopBaseline?.abort();
    await this.#taking?.catch(() => undefined);
    await workspace.dispose();
  }

  /**
   * A read-only session's workspace is sealed, so it restores through a second, unsealed workspace on the
   * same root and the baseline's git dir (the given root otherwise kept the last hydration's files, even
   * those deleted from the host since).
   */
  async #restoreBaseline(old: SnapshotableWorkspace, baseline: WorkspaceSnapshot): Promise<void> {
    if (!old.readOnly) {
      await old.restore(baseline);
      return;
    }
    const settings = this.settings;
    const { hostDriver } = await import('../backends/host/index.js');
    const driver = hostDriver({
      ...(settings.root === undefined ? {} : { root: settings.root }),
      ...(baseline.gitDir === undefined ? {} : { gitDir: baseline.gitDir }),
      ...(settings.exclude === undefined ? {} : { exclude: settings.exclude }),
      changeDetection: 'scan',
    });
    const writer = createWorkspace(driver, settings.limits === undefined ? {} : { limits: settings.limits });
    try {
      await writer.restore(baseline);
    } finally {
      await writer.dispose();
    }
  }
}

/**
 * A forked session's workspace (made by `session.fork()`): the session owns it and disposes it when done;
 * `reset()` puts it back as it was when forked (the sources are not hydrated again: it already shows them).
 */
export class ForkedWorkspace implements WorkspaceOrigin {
  readonly showsSources = true;

  constructor(
    readonly workspace: SnapshotableWorkspace,
    /** The fork as it started; undefined for a read-only fork, which cannot go back (nor needs to). */
    readonly baseline: WorkspaceSnapshot | undefined,
    readonly sessionId: string,
  ) {}

  async open(): Promise<SnapshotableWorkspace> {
    return this.workspace;
  }

  async close(workspace: SnapshotableWorkspace, reason: CloseReason): Promise<void> {
    if (reason !== 'reset') {
      await workspace.dispose();
      return;
    }
    if (this.baseline === undefined)
      throw new InvalidArgumentError(
        `session ${this.sessionId} cannot be reset: it is a fork of a read-only session; fork the parent again`,
      );
    await workspace.restore(this.baseline);
  }
}
