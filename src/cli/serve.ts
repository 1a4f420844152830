import { realpath } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { WriteBackOptions } from '../export/write-back.js';
import { scrubHostPaths } from '../session/scrub.js';
import type { WorkspaceToolsOptions } from '../tools/index.js';
import { SessionInUseError, UsageError, type MountArgument } from './args.js';
import { SessionStartError } from './usage-error.js';
import { prepareExitWork } from './exit-work.js';
import { buildMcpServer } from './mcp-server.js';
import type { HydrateProgress } from '../sources/schema.js';
import { HydrationFeed, type HydrationOutcome } from './mcp-hydration.js';
import { McpStdioTransport } from './mcp-stdio.js';
import { hydrationProgress } from './progress.js';
import { openServeSession, type ServeSession } from './serve-session.js';
import { checkStartFlags } from './start-checks.js';
import type { StoreFlags } from './store-flags.js';

/** Signals that stop the server cleanly (the session disposed, its temp root and git dir removed). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/**
 * After a failed start, how long the server waits for a client to speak (an MCP client speaks first, with
 * `initialize`, as soon as it has started the server) before it takes the run for one without a client.
 */
const CLIENT_GRACE_MS = 1_000;

export interface ServeOptions {
  backend: 'memory' | 'host' | 'overlay';
  /** See `McpCommand.lazyMounts`: directory mounts shown in place when no backend was chosen. */
  lazyMounts?: boolean;
  /** A host directory to work on (host backend); default a private temp directory. */
  root?: string;
  mounts: readonly MountArgument[];
  allow: readonly string[];
  readOnly: boolean;
  readBeforeWrite: boolean;
  /** No progress on stderr (hydration, the patch, write-back). */
  quiet?: boolean;
  /** Progress on stderr even when it is not a terminal. */
  progress?: boolean;
  /** Deadline of one glob or grep call, in milliseconds; default the workspace's (10 s). */
  searchTimeoutMs?: number;
  /** Adds the `bash` tool (`'host'`: real programs in a host workspace's root). */
  shell?: true | 'host' | 'sandbox';
  /** Write the session's git patch (from the state it started in) to this file when the server stops. */
  patchOut?: string;
  /** Write the changes back to the mounts when the server stops; conflicts are left and reported on stderr. */
  writeBack?: boolean;
  /** The `write_back` tool applies without asking when the client cannot ask the user (no elicitation). */
  allowWriteBack?: boolean;
  /** `--session NAME`: serve the stored session of that name from `store` (resumed when it exists). */
  session?: string;
  store?: StoreFlags;
  /** `--history-tools`: serve `history`, `undo` and `redo`. */
  historyTools?: boolean;
  /** Further options of the tool suite (limits), for embedders and benches; the command line sets none. */
  tools?: WorkspaceToolsOptions;
  version?: string;
}

/**
 * `sessionfs mcp`: one session for the life of the process, served over stdio. Resolves when the client
 * closes the connection (stdin ends) or the process is told to stop, after disposing the session (a host
 * backend's temp directory and git dir are removed). With `patchOut` or `writeBack`, that work is done
 * first; resolves to false when it did not all go through (a conflict left, a patch not written).
 */
export async function serveMcp(options: ServeOptions): Promise<boolean> {
  await checkStartFlags(options);
  const hostPaths = await hostPathsToHide([
    ...options.mounts.map((m) => m.hostPath),
    ...options.allow,
    ...(options.root === undefined ? [] : [options.root]),
  ]);
  const display = { quiet: options.quiet === true, force: options.progress === true };
  const stderrProgress = hydrationProgress(process.stderr, display);
  // The client is told too: log messages, and progress to the calls waiting (mcp-hydration.ts).
  const feed = options.mounts.length > 0 ? new HydrationFeed() : undefined;
  const progress = {
    onProgress: (update: HydrateProgress) => {
      stderrProgress.onProgress(update);
      feed?.report(update);
    },
    done: () => stderrProgress.done(),
  };
  // The server answers `initialize` (and lists its tools) at once, while the session starts: a big mount is
  // hydrated after that, the first call waiting for it (progress on stderr). A stop while the session starts
  // aborts it, so that it disposes what it created. A start that fails is said to the client (every call is
  // answered with the reason, naming no host path: mcp-start-failure.ts), and the server stays until the
  // client leaves; without a client (nothing heard from stdin) it stops at once. Either way the process
  // then exits as for any failed start, the reason on stderr.
  const starting = new AbortController();
  const started = startSession(options, starting.signal, progress, display, hostPaths);
  let opening = true;
  void started.then(
    (start) => {
      opening = false;
      feed?.finish(start === undefined ? undefined : outcomeOf(start.opened, feed, options.session !== undefined));
    },
    () => {
      opening = false;
      feed?.finish(undefined);
    },
  );
  let heard = false;
  const { server, lane } = await buildMcpServer(
    {
      ready: started.then((start) => {
        if (start === undefined) throw new Error('the server stopped while the session started');
        return start.opened.session;
      }),
      readOnly: options.readOnly,
      ...(feed === undefined ? {} : { hydration: feed }),
    },
    {
      tools: {
        ...options.tools,
        readBeforeWrite: options.readBeforeWrite,
        ...(options.shell === undefined ? {} : { shell: options.shell }),
      },
      redact: hostPaths,
      hostAreas: [
        ...(options.root === undefined ? [] : [{ hostPath: options.root, workspacePath: '' }]),
        ...options.mounts.map((mount) => ({
          hostPath: mount.hostPath,
          workspacePath: mount.path ?? basename(resolve(mount.hostPath)),
        })),
        ...options.allow.map((hostPath) => ({ hostPath })),
      ],
      // A stored session holds its own copy of the mounts: `sessionfs sessions write-back` writes it back.
      ...(options.mounts.some((mount) => mount.readOnly !== true) && !options.readOnly && options.session === undefined
        ? {
            writeBack: async (writeOptions: WriteBackOptions) => {
              const start = await started;
              if (start === undefined) throw new Error('the server stopped while the session started');
              return start.opened.writeBack(writeOptions);
            },
          }
        : {}),
      allowWriteBack: options.allowWriteBack === true,
      historyTools: options.historyTools === true,
      ...(options.version === undefined ? {} : { version: options.version }),
    },
  );
  const transport = new McpStdioTransport({
    call: lane.call,
    received: (message) => {
      heard = true;
      lane.received(message);
    },
  });
  return new Promise<boolean>((done, fail) => {
    let closing = false;
    const shutdown = () => {
      if (closing) return;
      closing = true;
      if (opening) starting.abort();
      void server
        .close()
        .catch(() => undefined)
        .then(async () => {
          let start: Started | undefined;
          try {
            start = await started;
          } catch (error) {
            fail(error);
            return;
          }
          if (start === undefined) return done(true);
          const finished = await start.finish().catch(() => false);
          await start.opened.dispose().catch(() => undefined);
          done(finished);
        });
    };
    // The transport closes when stdin ends, and when the client stops reading stdout (EPIPE): either way the
    // session ends here, after the exit work.
    server.onclose = shutdown;
    // A message no handler could take is dropped (a request among them answered with an error): said on stderr.
    server.onerror = (error) => process.stderr.write(`sessionfs: ${scrubHostPaths(shortened(error.message), { hostDirs: hostPaths })}\n`);
    // stdin ends when the client closes its side; `close` also covers a client that died (EPIPE, no `end`).
    process.stdin.once('end', shutdown);
    process.stdin.once('close', shutdown);
    for (const signal of STOP_SIGNALS) process.once(signal, shutdown);
    started.catch(() => {
      if (heard) return;
      setTimeout(() => {
        if (!heard) shutdown();
      }, CLIENT_GRACE_MS);
    });
    void server.connect(transport).catch(shutdown);
  });
}

/** How the mounts' hydration went, for the client: the session's own report, or the mount table's. */
function outcomeOf(opened: ServeSession, feed: HydrationFeed, stored: boolean): HydrationOutcome {
  const hydration = opened.session.hydration;
  if (hydration !== undefined) return hydration;
  if (stored) return { files: 0, bytes: 0, skipped: [], resumed: true };
  return { files: feed.files, bytes: feed.bytes, skipped: opened.skipped ?? [] };
}

/** A session that started, and the work its server does when it stops. */
interface Started {
  opened: ServeSession;
  finish: () => Promise<boolean>;
}

/**
 * Opens the server's session (hydrating its mounts) and prepares the exit work; undefined when a stop aborted
 * it (what it made is disposed). A usage error stays one; any other failure names no host path.
 */
async function startSession(
  options: ServeOptions,
  signal: AbortSignal,
  progress: Pick<ReturnType<typeof hydrationProgress>, 'onProgress' | 'done'>,
  display: { quiet: boolean; force: boolean },
  hostPaths: string[],
): Promise<Started | undefined> {
  let opened: ServeSession;
  try {
    opened = await openServeSession({
      backend: options.backend,
      ...(options.lazyMounts === true ? { lazyMounts: true } : {}),
      ...(options.root === undefined ? {} : { root: options.root }),
      mounts: options.mounts,
      allow: options.allow,
      readOnly: options.readOnly,
      ...(options.shell === undefined ? {} : { shell: options.shell }),
      ...(options.searchTimeoutMs === undefined ? {} : { limits: { searchTimeoutMs: options.searchTimeoutMs } }),
      signal,
      onProgress: progress.onProgress,
      ...(options.session === undefined ? {} : { session: options.session }),
      ...(options.store === undefined ? {} : { store: options.store }),
    });
    progress.done();
    if (options.session !== undefined && options.mounts.length > 0 && opened.session.hydration === undefined)
      process.stderr.write(
        `sessionfs: --session ${JSON.stringify(options.session)} exists: resumed as stored; the --mount folders were not read again (they seed only a new session)\n`,
      );
  } catch (error) {
    if (error instanceof UsageError || error instanceof SessionInUseError) throw error;
    if (signal.aborted) return undefined;
    const message = error instanceof Error ? error.message : String(error);
    throw new SessionStartError(scrubHostPaths(message, { hostDirs: hostPaths }));
  }
  hostPaths.push(...opened.hostDirs);
  if (signal.aborted) {
    await opened.dispose();
    return undefined;
  }
  try {
    const finish = await prepareExitWork(
      { filesystem: opened.session.filesystem, writeBack: opened.writeBack },
      {
        ...(options.patchOut === undefined ? {} : { patchOut: options.patchOut }),
        writeBack: options.writeBack === true,
        redact: hostPaths,
        progress: display,
      },
    );
    return { opened, finish };
  } catch (error) {
    // The session exists by now: a server that cannot start must not leave its temp root and git dir behind.
    await opened.dispose().catch(() => undefined);
    throw error;
  }
}

/** The given host paths, absolute and symlink-resolved, longest first: none may appear in any output. */
async function hostPathsToHide(paths: readonly string[]): Promise<string[]> {
  const found = new Set<string>([process.cwd()]);
  for (const path of paths) {
    found.add(resolve(path));
    try {
      found.add(await realpath(path));
    } catch {
      // a missing path is reported by createSession
    }
  }
  return [...found].filter((p) => p.length > 1);
}

/** A message for a log line: a peer's message may be echoed in it, whole. */
function shortened(text: string): string {
  const message = text.replace(/\s+/g, ' ');
  return message.length <= 300 ? message : `${message.slice(0, 300)}… (${message.length} characters)`;
}
