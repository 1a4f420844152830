import picomatch from 'picomatch';
import { InvalidArgumentError } from '../workspace/errors.js';
import { isSameOrInside, type NormalizedPath } from '../workspace/paths.js';

/** What `confirm` is asked about: a delete, or replacing an existing file (a write, rename or copy onto it). */
export interface PolicyOperation {
  op: 'delete' | 'overwrite' | 'rename' | 'copy';
  /** The path deleted or overwritten, or the source of a rename or copy (as shown to a model: `/` for the root). */
  path: string;
  /** The existing destination a rename or copy replaces. */
  to?: string;
}

/**
 * What a workspace lets anyone (a model through tools, or the orchestrator) do, checked by the shared layer
 * before the operation touches anything. See docs/governance.md.
 */
export interface WorkspacePolicy {
  /** Picomatch globs (`dot: true`, relative to the root); when given, only matching paths (and what lies under them) are admitted. */
  allow?: string[];
  /** Picomatch globs (`dot: true`, case-insensitive); a match hides the path and everything under it. Wins over `allow`. */
  deny?: string[];
  /** Extensions (`'.pem'` or `'pem'`, case-insensitive) denied like a `deny` glob `**\/*.ext`. */
  blockedExtensions?: string[];
  /** Largest file a write, append or copy may leave behind (`LimitExceededError`). */
  maxFileBytes?: number;
  /** Most files and links a recursive delete, rename or copy may touch (`LimitExceededError`, nothing changed). */
  maxFilesPerOperation?: number;
  /** Most bytes all files together may hold (`QuotaExceededError`). */
  quotaBytes?: number;
  /** Most files (and links) the workspace may hold (`QuotaExceededError`). */
  quotaFiles?: number;
  /** Asked before a delete or before replacing an existing file; `false` or a throw denies it (`PolicyError`). */
  confirm?: (operation: PolicyOperation) => boolean | Promise<boolean>;
}

const LIST_KEYS = ['allow', 'deny', 'blockedExtensions'] as const;
const NUMBER_KEYS = ['maxFileBytes', 'maxFilesPerOperation', 'quotaBytes', 'quotaFiles'] as const;
const KNOWN_KEYS: readonly string[] = [...LIST_KEYS, ...NUMBER_KEYS, 'confirm'];

/** Checks a policy as given by a caller: every problem is an `InvalidArgumentError` naming the option. */
export function validatePolicy(policy: unknown): WorkspacePolicy {
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy))
    throw new InvalidArgumentError('policy must be an object (see docs/governance.md)');
  const given = policy as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!KNOWN_KEYS.includes(key)) throw new InvalidArgumentError(`policy.${key} is not a policy option (known: ${KNOWN_KEYS.join(', ')})`);
  }
  for (const key of LIST_KEYS) {
    const value = given[key];
    if (value === undefined) continue;
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item.trim() === '' || item.includes('\0')))
      throw new InvalidArgumentError(`policy.${key} must be a list of non-empty strings`);
    if (key !== 'blockedExtensions' && value.some((item: string) => item.startsWith('!')))
      throw new InvalidArgumentError(`policy.${key} takes no negated globs ("!…"): put exceptions in the other list`);
  }
  for (const key of NUMBER_KEYS) {
    const value = given[key];
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0))
      throw new InvalidArgumentError(`policy.${key} must be a non-negative whole number, got ${String(value)}`);
  }
  if (given['confirm'] !== undefined && typeof given['confirm'] !== 'function')
    throw new InvalidArgumentError('policy.confirm must be a function of the operation returning a boolean (or a promise of one)');
  return given as WorkspacePolicy;
}

/** How the path rules judge a path: `if-directory` when only a directory there (one that may hold allowed paths) is admitted. */
export type PathVerdict = 'admitted' | 'denied' | 'if-directory';

interface AllowRule {
  matches: RegExp;
  /** The pattern's literal leading directories ('' when it starts with a glob). */
  base: NormalizedPath;
  /** Whether anything below `base` could match (the pattern has a glob part). */
  open: boolean;
}

/** Verdicts remembered per path: the rules never change, so a remembered verdict is exact. */
const VERDICTS_KEPT = 8192;

/**
 * The allow/deny/extension part of a policy, judged on normalised paths ('' is the root, always admitted).
 * A path is denied when it or any directory above it matches `deny` or a blocked extension, so denying a
 * directory hides everything in it. With `allow`, a path is admitted when it or a directory above it
 * matches; a directory that could hold an allowed path (on the way to one) is admitted too, so it lists.
 *
 * On the hot path of every operation, so the globs are compiled once into regular expressions (every
 * `deny` glob into one), prefixes are cut without splitting the path, and verdicts are remembered.
 */
export class PathRules {
  readonly active: boolean;
  readonly #deny: RegExp | undefined;
  readonly #extensions: readonly string[];
  readonly #allow: readonly AllowRule[] | undefined;
  #verdicts = new Map<string, PathVerdict>();

  constructor(policy: WorkspacePolicy) {
    const deny = (policy.deny ?? []).map(cleanPattern);
    this.#deny = deny.length === 0 ? undefined : oneRegExp(deny.map((pattern) => picomatch.makeRe(pattern, { dot: true, nocase: true })));
    this.#extensions = (policy.blockedExtensions ?? []).map((ext) => `.${ext.trim().replace(/^\.+/, '').toLowerCase()}`);
    this.#allow = policy.allow?.map(cleanPattern).map((pattern) => {
      const scan = picomatch.scan(pattern);
      const base = scan.isGlob ? scan.base : pattern;
      return { matches: picomatch.makeRe(pattern, { dot: true }), base, open: scan.isGlob };
    });
    this.active = this.#deny !== undefined || this.#extensions.length > 0 || this.#allow !== undefined;
  }

  /**
   * The verdict on `path`, remembered under `given`: the string the caller gave for it, when there was one
   * (the same string object on every call hashes once, where a freshly normalised copy hashes each time).
   * One table serves both: a normalised path normalises to itself, so a key always names one path.
   */
  judge(path: NormalizedPath, given: string = path): PathVerdict {
    if (path === '' || !this.active) return 'admitted';
    let verdict = this.#verdicts.get(given);
    if (verdict === undefined) {
      verdict = this.#judge(path);
      if (this.#verdicts.size >= VERDICTS_KEPT) this.#verdicts = new Map();
      this.#verdicts.set(given, verdict);
    }
    return verdict;
  }

  #judge(path: NormalizedPath): PathVerdict {
    let allowed = this.#allow === undefined;
    let start = 0;
    while (start <= path.length) {
      let end = path.indexOf('/', start);
      if (end === -1) end = path.length;
      const prefix = end === path.length ? path : path.slice(0, end);
      if (this.#deny?.test(prefix) === true || this.#blockedName(path.slice(start, end))) return 'denied';
      if (!allowed && this.#allow?.some((rule) => rule.matches.test(prefix)) === true) allowed = true;
      start = end + 1;
    }
    if (allowed) return 'admitted';
    return this.#allow?.some((rule) => mayHold(rule, path)) === true ? 'if-directory' : 'denied';
  }

  #blockedName(name: string): boolean {
    if (this.#extensions.length === 0) return false;
    const lower = name.toLowerCase();
    return this.#extensions.some((ext) => lower.endsWith(ext) && lower.length > ext.length);
  }
}

/** Several anchored expressions (same flags) as one: a path matches it when it matches any of them. */
function oneRegExp(expressions: RegExp[]): RegExp {
  if (expressions.length === 1) return expressions[0] as RegExp;
  return new RegExp(expressions.map((expression) => `(?:${expression.source})`).join('|'), expressions[0]?.flags);
}

/** A directory on the way to the rule's base, or inside the base of a pattern that globs below it. */
function mayHold(rule: AllowRule, directory: NormalizedPath): boolean {
  if (rule.base !== '' && isSameOrInside(rule.base, directory)) return true;
  return rule.open && (rule.base === '' || isSameOrInside(directory, rule.base));
}

function cleanPattern(pattern: string): string {
  return pattern.trim().replace(/^(?:\.?\/)+/, '');
}
