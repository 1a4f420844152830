import picomatch from 'picomatch';
import type { BackendDriver, DriverEntryKind } from '../workspace/driver.js';
import { InvalidArgumentError, PolicyError } from '../workspace/errors.js';
import { displayPath, isSameOrInside, type NormalizedPath } from '../workspace/paths.js';
import { resolvesToItself } from '../workspace/links.js';

/**
 * What a workspace protects unless the orchestrator says otherwise: version-control internals, whose
 * content makes the user's next `git`/`hg`/`svn`/`jj` command run something (hooks, `core.fsmonitor`, …).
 * A pattern matches the directory itself too (`**\/.git/**` matches `.git`).
 */
export const DEFAULT_PROTECT: readonly string[] = Object.freeze(['**/.git/**', '**/.hg/**', '**/.svn/**', '**/.jj/**']);

/** Checks a `protect` option: a list of picomatch globs (no negation), or `undefined` for the default. */
export function validateProtect(protect: unknown): readonly string[] {
  if (protect === undefined) return DEFAULT_PROTECT;
  if (!Array.isArray(protect) || protect.some((item) => typeof item !== 'string' || item.trim() === '' || item.includes('\0')))
    throw new InvalidArgumentError('protect must be a list of non-empty glob strings (see docs/security-model.md)');
  if (protect.some((item: string) => item.trim().startsWith('!')))
    throw new InvalidArgumentError('protect takes no negated globs ("!…"): list only what to protect');
  return Object.freeze(protect.map((item: string) => item.trim().replace(/^(?:\.?\/)+/, '')));
}

/** A protected entry: the topmost path a `protect` pattern matches, and that pattern. */
export interface ProtectedRoot {
  root: NormalizedPath;
  pattern: string;
}

/** Roots remembered per path: patterns never change, so a remembered answer is exact. */
const ROOTS_KEPT = 8192;

/**
 * The `protect` patterns, judged on normalised paths. The protected root of a path is its shortest prefix
 * (the path itself included) that a pattern matches: for `**\/.git/**` and `a/.git/hooks/x`, `a/.git`.
 * Case-insensitive, as git itself is on the file systems that fold case (`.GIT` is a `.git` there).
 */
export class ProtectRules {
  readonly patterns: readonly string[];
  readonly active: boolean;
  readonly #matchers: readonly { pattern: string; matches: RegExp; literals: readonly RegExp[] }[];
  #roots = new Map<NormalizedPath, ProtectedRoot | null>();

  constructor(patterns: readonly string[]) {
    this.patterns = patterns;
    this.active = patterns.length > 0;
    this.#matchers = patterns.map((pattern) => ({
      pattern,
      matches: picomatch.makeRe(pattern, { dot: true, nocase: true }),
      literals: literalSegments(pattern),
    }));
  }

  /**
   * The protected root `path` is in: its parent's (remembered, so siblings share it), else the path itself
   * when a pattern matches it. Directories on the way are remembered, worked out from the nearest remembered
   * ancestor down without recursion (a path of thousands of segments costs a loop, not a deep stack); the
   * path itself is not unless asked for as a directory later: a bulk write asks once per file, and
   * remembering every file would churn the memo for nothing.
   */
  rootOf(path: NormalizedPath): ProtectedRoot | undefined {
    if (!this.active || path === '') return undefined;
    const known = this.#roots.get(path);
    if (known !== undefined) return known ?? undefined;
    const slash = path.lastIndexOf('/');
    const above = slash === -1 ? null : this.#rootAt(path.slice(0, slash));
    return above ?? this.#matching(path) ?? undefined;
  }

  /** `rootOf` of a directory, remembered with every directory above it not remembered yet. */
  #rootAt(path: NormalizedPath): ProtectedRoot | null {
    const pending: NormalizedPath[] = [];
    let found: ProtectedRoot | null | undefined;
    for (let at = path; ;) {
      found = this.#roots.get(at);
      if (found !== undefined) break;
      pending.push(at);
      const slash = at.lastIndexOf('/');
      if (slash === -1) {
        found = null;
        break;
      }
      at = at.slice(0, slash);
    }
    for (let index = pending.length - 1; index >= 0; index -= 1) {
      const at = pending[index] as NormalizedPath;
      if (found === null) found = this.#matching(at);
      if (this.#roots.size >= ROOTS_KEPT) this.#roots = new Map();
      this.#roots.set(at, found);
    }
    return found;
  }

  /** The root `path` is when a pattern matches the path itself. */
  #matching(path: NormalizedPath): ProtectedRoot | null {
    for (const matcher of this.#matchers)
      if (holdsAll(path, matcher.literals) && matcher.matches.test(path)) return { root: path, pattern: matcher.pattern };
    return null;
  }
}

/**
 * The segments of a glob that match only themselves (ASCII, no glob syntax), each as a regex ignoring case:
 * a path the glob matches holds each of them, whatever the case (the glob's regex folds ASCII case only
 * among ASCII characters), so a path lacking one needs no glob regex. Most paths lack `.git`. Searched for
 * in the path as it is: a bulk write asks for every path, and a lower-cased copy of each was most of the cost.
 */
function literalSegments(pattern: string): RegExp[] {
  return pattern
    .split('/')
    .filter((segment) => /^[\x20-\x7e]+$/.test(segment) && !/[*?[\]{}()!+@\\^$|]/.test(segment))
    .map((segment) => new RegExp(segment.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'), 'i'));
}

function holdsAll(path: string, literals: readonly RegExp[]): boolean {
  for (const literal of literals) if (!literal.test(path)) return false;
  return true;
}

/**
 * The `protect` rule of one workspace. A protected root the host provided (there when the workspace
 * opened, or brought in by hydration with `includeGit: 'read-only'`) is read-only to every mutation; a
 * root this workspace created through its own operations (the model's `mkdir x/.git`) is ordinary content.
 * Telling them apart costs no walk: a root is judged the first time a mutation reaches it. Missing then, the
 * mutation creates it, so it is this workspace's own for good; present and not created here, it is the
 * host's. See docs/security-model.md.
 */
export class Protection {
  readonly rules: ProtectRules;
  readonly #driver: BackendDriver;
  /** Roots this workspace created. */
  readonly #own = new Set<NormalizedPath>();
  /** Roots judged (or declared by hydration) to come from the host. */
  readonly #host = new Set<NormalizedPath>();
  /** Roots hydration is writing right now (see `hostContent`). */
  readonly #hydrating = new Set<NormalizedPath>();

  constructor(driver: BackendDriver, patterns: readonly string[]) {
    this.#driver = driver;
    this.rules = new ProtectRules(patterns);
  }

  get active(): boolean {
    return this.rules.active;
  }

  /**
   * PolicyError unless a mutation of `path` is allowed (nothing protected, or a root of this workspace's
   * own); synchronous when no I/O is needed. Where the driver has links, what the path really reaches is
   * judged too: a link to `.git` is no way round the rule.
   */
  guard(path: NormalizedPath): Promise<void> | undefined {
    if (!this.rules.active) return undefined;
    const found = this.rules.rootOf(path);
    const settled = found === undefined || this.#own.has(found.root) || this.#hydrating.has(found.root);
    if (found !== undefined && this.#host.has(found.root) && !this.#hydrating.has(found.root)) throw violation(found, path);
    if (settled && (this.#driver.resolve === undefined || path === '' || resolvesToItself(this.#driver, path))) return undefined;
    return this.#guard(path, settled ? undefined : found);
  }

  async #guard(path: NormalizedPath, found: ProtectedRoot | undefined): Promise<void> {
    if (found !== undefined) await this.#judge(found, path);
    if (this.#driver.resolve === undefined || path === '') return;
    const real = await this.#driver.resolve(path).catch(() => path);
    if (real === path) return;
    const reached = this.rules.rootOf(real);
    if (reached !== undefined && !this.#own.has(reached.root) && !this.#hydrating.has(reached.root)) await this.#judge(reached, path);
  }

  /** Decides once whether a root is the host's: present and not created here. */
  async #judge(found: ProtectedRoot, path: NormalizedPath): Promise<void> {
    if (this.#own.has(found.root) || this.#hydrating.has(found.root)) return;
    if (!this.#host.has(found.root)) {
      const kind = await this.#driver.kind(found.root).catch(() => undefined);
      if (kind === undefined) {
        this.#own.add(found.root);
        return;
      }
      this.#host.add(found.root);
    }
    throw violation(found, path);
  }

  /**
   * Before a delete, a move or a replacing copy of a directory: PolicyError when it holds a host root (the
   * walk costs the size of the directory, which the operation itself costs anyway).
   */
  async guardTree(path: NormalizedPath, kind: DriverEntryKind | undefined): Promise<void> {
    if (!this.rules.active || kind !== 'directory') return;
    for await (const entry of this.#driver.walk(path)) {
      const found = this.rules.rootOf(entry.path);
      if (found !== undefined && found.root === entry.path) await this.#judge(found, entry.path);
    }
  }

  /**
   * Whether a restore must leave `path` as it is: inside a root that is not this workspace's own. `exists`,
   * when the caller knows it for a path that is itself a root not judged yet, judges it as a mutation would:
   * present, it is the host's; missing, the restore creates it and it becomes the workspace's own.
   */
  readonly leavesAlone = (path: NormalizedPath, exists?: boolean): boolean => {
    const found = this.rules.rootOf(path);
    if (found === undefined || this.#own.has(found.root) || this.#hydrating.has(found.root)) return false;
    if (this.#host.has(found.root) || exists === undefined || path !== found.root) return true;
    (exists ? this.#host : this.#own).add(found.root);
    return exists;
  };

  /** A root this workspace created (a program run in the session made it: see the host shell). */
  adopt(root: NormalizedPath): void {
    if (!this.#host.has(root)) this.#own.add(root);
  }

  /** Runs `task` (hydration) with `roots` writable, then makes them the host's: read-only from then on. */
  async hostContent<T>(roots: readonly NormalizedPath[], task: () => Promise<T>): Promise<T> {
    for (const root of roots) this.#hydrating.add(root);
    try {
      return await task();
    } finally {
      for (const root of roots) {
        this.#hydrating.delete(root);
        this.#own.delete(root);
        this.#host.add(root);
      }
    }
  }

  /** The reason a restore gives for a path it left alone. */
  skipReason(path: NormalizedPath): string {
    const found = this.rules.rootOf(path);
    return `protected (protect: '${found?.pattern ?? ''}'): what the host provided there is read-only, so restore leaves it as it is`;
  }
}

/** The error a mutation of a protected path gets: EPERM, naming the path and the rule. */
export function violation(found: ProtectedRoot, path: NormalizedPath): PolicyError {
  const shown = displayPath(path);
  return new PolicyError(
    `protected by the workspace's protect rule '${found.pattern}': ${shown} lies in ${displayPath(found.root)}, which the host provided; version-control internals and the other protected files are read-only here`,
    shown,
  );
}

/** Whether `path` is `root` or below it, or above it (a directory holding it). */
export function related(path: NormalizedPath, root: NormalizedPath): boolean {
  return isSameOrInside(path, root) || isSameOrInside(root, path);
}
