import { hydrate } from '../sources/hydrate.js';
import { parseSources, type HostSource, type HydrateProgress, type HydrateResult } from '../sources/schema.js';
import type { SessionHead } from '../store/session-store.js';
import { ConflictError, InvalidArgumentError } from '../workspace/errors.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';

/** The options of `createSession({ store, sessionId, … })` that seed a new stored session from host folders. */
export interface StoreSeedOptions {
  /**
   * Host folders hydrated into the session when it is new (no head published yet), with hydration's rules
   * (allow-list, `.git` skipped, `policy` skipping what it denies); the result is published as the first
   * head and reported in `session.hydration`. An existing session is refused with `ConflictError` unless
   * `seed: 'if-new'`. See docs/sessions-and-rollback.md, "Stored sessions seeded from host folders".
   */
  sources?: HostSource[];
  /** Required with `sources`: the host directories they may come from. */
  allowedHostRoots?: string[];
  /** `'if-new'`: with `sources`, an existing session resumes as stored (nothing hydrated) instead of being refused. */
  seed?: 'if-new';
  /** Hydration progress while seeding. */
  onProgress?: (progress: HydrateProgress) => void;
  /** Aborts the seeding hydration (nothing is stored then). */
  signal?: AbortSignal;
}

/** Seeding, checked. */
export interface Seed {
  sources: HostSource[];
  allowedHostRoots: string[];
  ifNew: boolean;
  onProgress: ((progress: HydrateProgress) => void) | undefined;
  signal: AbortSignal | undefined;
}

/**
 * Checks the seeding options before anything is taken from the store: the seed, or undefined without
 * `sources`. What only seeding uses is refused without `sources`, never ignored.
 */
export function seedOf(options: StoreSeedOptions & { fork?: boolean; readOnly?: boolean }): Seed | undefined {
  if (options.seed !== undefined && options.seed !== 'if-new')
    throw new InvalidArgumentError(`seed must be 'if-new', got ${JSON.stringify(options.seed)}`);
  if (options.sources === undefined) {
    const seedOnly = (['allowedHostRoots', 'seed', 'onProgress', 'signal'] as const).filter((key) => options[key] !== undefined);
    if (seedOnly.length > 0) throw new InvalidArgumentError(`${seedOnly.join(', ')} only apply to seeding: give sources too`);
    return undefined;
  }
  const sources = parseSources(options.sources);
  if (options.fork === true || options.readOnly === true)
    throw new InvalidArgumentError(`sources seed a new session: they cannot be given with ${options.fork === true ? 'fork' : 'readOnly'}`);
  if (options.allowedHostRoots !== undefined && !Array.isArray(options.allowedHostRoots))
    throw new InvalidArgumentError('allowedHostRoots must be a list of host directories');
  return {
    sources,
    allowedHostRoots: [...(options.allowedHostRoots ?? [])],
    ifNew: options.seed === 'if-new',
    onProgress: options.onProgress,
    signal: options.signal,
  };
}

/**
 * Hydrates `seed` into the workspace of a session that is new (nothing ever published), all or nothing;
 * undefined for an existing session under `seed: 'if-new'`. `ConflictError` for an existing session
 * otherwise: its content is the model's work, which a hydration would mix host files into.
 */
export async function plant(seed: Seed, head: SessionHead, workspace: SnapshotableWorkspace): Promise<HydrateResult | undefined> {
  if (head.version !== 0 || head.root !== undefined) {
    if (seed.ifNew) return undefined;
    throw new ConflictError(
      `session '${head.sessionId}' already exists (version ${head.version}): sources seed only a new session; open it without sources to resume it, or pass seed: 'if-new' to seed it only when it is new`,
    );
  }
  return hydrate(workspace, seed.sources, {
    allowedHostRoots: seed.allowedHostRoots,
    ...(seed.onProgress === undefined ? {} : { onProgress: seed.onProgress }),
    ...(seed.signal === undefined ? {} : { signal: seed.signal }),
  });
}
