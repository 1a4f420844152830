import { createSession } from '../session/index.js';
import type { HostSource, HydrateProgress } from '../sources/schema.js';
import { ConflictError, NotSupportedError } from '../workspace/errors.js';
import type { WorkspaceLimits } from '../workspace/limits.js';
import { openStore, storeLabel } from './open-store.js';
import type { ServeSession } from './served-session.js';
import type { StoreFlags } from './store-flags.js';
import { SessionInUseError } from './usage-error.js';

export interface StoredServeOptions {
  session: string;
  store: StoreFlags;
  readOnly: boolean;
  limits?: Partial<WorkspaceLimits>;
  /** `--mount`s: hydrated into the session when it is new (then published as where it began); an existing one resumes as stored. */
  seed?: { sources: HostSource[]; allowedHostRoots: string[] };
  /** Seeding's hydration: aborted when the server stops meanwhile, its progress reported. */
  signal?: AbortSignal;
  onProgress?: (progress: HydrateProgress) => void;
}

/**
 * `sessionfs mcp --session NAME`: the stored session of that name (created when absent), from the local
 * store or Postgres + S3. It publishes after every successful call (before the call is answered), so a
 * server killed at any moment loses at most the call in flight; a new server with the same name resumes
 * it. Another live process holding the session is `SessionInUseError` (exit 3). `--read-only` serves the
 * head as a view, taking no lease (the session must exist). With `seed`, a new session is hydrated from
 * the mounts first (`seed: 'if-new'`); an existing one resumes as stored, the mounts not read again
 * (`session.hydration` is then undefined: the caller says so).
 */
export async function openStoredServeSession(options: StoredServeOptions): Promise<ServeSession> {
  const opened = await openStore(options.store, { create: true, server: true });
  if (opened === undefined) throw new Error('the session store could not be opened');
  const { store } = opened;
  try {
    if (options.readOnly && (await store.head(options.session)) === undefined)
      throw new Error(
        `--read-only serves an existing session: there is no session ${JSON.stringify(options.session)} in ${storeLabel(options.store)}`,
      );
    let session;
    try {
      session = await createSession({
        store,
        sessionId: options.session,
        ...(options.readOnly ? { readOnly: true } : {}),
        ...(options.limits === undefined ? {} : { limits: options.limits }),
        ...(options.seed === undefined
          ? {}
          : {
              ...options.seed,
              seed: 'if-new' as const,
              ...(options.signal === undefined ? {} : { signal: options.signal }),
              ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
            }),
      });
    } catch (error) {
      if (error instanceof ConflictError)
        throw new SessionInUseError(
          `--session ${JSON.stringify(options.session)} is open in another sessionfs process (${error.message}): stop that server first, or pick another name`,
        );
      throw error;
    }
    return {
      session,
      writeBack: () =>
        Promise.reject(new NotSupportedError('a stored session has no mounts to write back to: use `sessionfs sessions write-back`')),
      hostDirs: opened.hostDirs,
      async dispose() {
        try {
          await session.dispose();
        } finally {
          await opened.close();
        }
      },
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}
