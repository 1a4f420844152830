import type { BackendDriver, DriverEntryKind, DriverListEntry, DriverWalkEntry, SnapshotEntry, SnapshotTree } from '../workspace/driver.js';
import { fromDriverError } from '../workspace/driver-errors.js';
import { driverWith } from '../workspace/driver-proxy.js';
import { LimitExceededError, PolicyError } from '../workspace/errors.js';
import { displayPath, joinPath, normalizePath, relativeTo, type NormalizedPath } from '../workspace/paths.js';
import type { DiffEntry, WriteMode } from '../workspace/types.js';
import { PathRules, validatePolicy, type PolicyOperation, type WorkspacePolicy } from './policy.js';
import { measure, NOTHING, QuotaLedger, type Amount } from './usage.js';
import { resolvesToItself } from '../workspace/links.js';

/** What an access means to reach: a file, a directory, or either (the entry's kind decides). */
export type AccessIntent = 'file' | 'directory' | 'any';

/** Gives back what an admitted mutation reserved, when it failed. */
export type Release = () => void;
const NO_RELEASE: Release = () => undefined;

/** A rename or copy about to run, as the shared layer planned it. */
export interface PlannedTransfer {
  verb: 'move' | 'copy';
  source: NormalizedPath;
  target: NormalizedPath;
  sourceKind: DriverEntryKind;
  targetKind: DriverEntryKind | undefined;
}

/**
 * A workspace's `policy`, enforced by the shared layer: every check runs before the operation changes
 * anything (path rules before any I/O except resolving links; sizes, counts, quotas and `confirm` after the
 * preconditions, under the operation's path locks). Without a policy every method is a no-op.
 */
export class Governance {
  readonly policy: Readonly<WorkspacePolicy> | undefined;
  readonly #driver: BackendDriver;
  readonly #rules: PathRules;
  readonly #quota: QuotaLedger | undefined;
  // What every operation asks of the policy, kept here: one object to read on the hot path, not three.
  readonly #judges: boolean;
  readonly #confirms: boolean;
  readonly #maxFileBytes: number;

  constructor(driver: BackendDriver, policy: unknown) {
    this.#driver = driver;
    this.policy = policy === undefined ? undefined : Object.freeze({ ...validatePolicy(policy) });
    this.#rules = new PathRules(this.policy ?? {});
    const { quotaBytes, quotaFiles } = this.policy ?? {};
    this.#quota = quotaBytes === undefined && quotaFiles === undefined ? undefined : new QuotaLedger(driver, quotaBytes, quotaFiles);
    this.#judges = this.#rules.active;
    this.#confirms = this.policy?.confirm !== undefined;
    this.#maxFileBytes = this.policy?.maxFileBytes ?? Infinity;
  }

  /**
   * The normalised path, once the rules admit it (PolicyError otherwise). Synchronous when no I/O is needed
   * to decide (no policy, or a verdict that no link can change): the hot path of every operation.
   */
  admit(path: unknown, intent: AccessIntent): NormalizedPath | Promise<NormalizedPath> {
    const target = normalizePath(path);
    const checked = this.checkAccess(target, intent, path as string);
    return checked === undefined ? target : checked.then(() => target);
  }

  /**
   * PolicyError unless the path (and what it really reaches, links followed) is admitted; synchronous when it
   * can be. `given`: the string the caller gave for `path`, under which its verdict is remembered.
   */
  checkAccess(path: NormalizedPath, intent: AccessIntent, given?: string): Promise<void> | undefined {
    if (!this.#judges) return undefined;
    const verdict = this.#rules.judge(path, given);
    if (verdict === 'denied') throw denied(path);
    if (verdict === 'admitted' && (this.#driver.resolve === undefined || path === '' || resolvesToItself(this.#driver, path)))
      return undefined;
    return this.#checkAccess(path, intent);
  }

  async #checkAccess(path: NormalizedPath, intent: AccessIntent): Promise<void> {
    if (!(await this.#admits(path, intent)) || !(await this.#admitsReal(path, intent))) throw denied(path);
  }

  /** The driver as list, walks, glob and grep should see it: entries the rules deny are absent. */
  view(driver: BackendDriver): BackendDriver {
    if (!this.#rules.active) return driver;
    const list = async (path: NormalizedPath): Promise<DriverListEntry[]> => {
      const base = await this.#real(path);
      const entries = await driver.list(path);
      const admitted = await Promise.all(
        entries.map((entry) => this.#admitsEntry(joinPath(path, entry.name), joinPath(base, entry.name), entry)),
      );
      return entries.filter((_, index) => admitted[index]);
    };
    const walk = (base: NormalizedPath): AsyncIterable<DriverWalkEntry> => this.#filteredWalk(driver, base);
    return driverWith(driver, { list, walk });
  }

  async *#filteredWalk(driver: BackendDriver, base: NormalizedPath): AsyncGenerator<DriverWalkEntry> {
    const realBase = await this.#real(base);
    for await (const entry of driver.walk(base)) {
      if (await this.#admitsEntry(entry.path, joinPath(realBase, relativeTo(entry.path, base)), entry)) yield entry;
    }
  }

  /**
   * Before a write: the final size, the quota, and `confirm` for replacing an existing file. Synchronous
   * when none of them needs I/O or a callback (no policy; or a size limit checked on the content alone).
   */
  beforeWrite(
    target: NormalizedPath,
    state: 'missing' | 'existing' | 'dangling',
    mode: WriteMode,
    bytes: number,
  ): Release | Promise<Release> {
    if (this.policy === undefined) return NO_RELEASE;
    const replacing = state === 'existing' && mode === 'overwrite';
    if (this.#quota === undefined && !(state === 'existing' && mode === 'append') && !(replacing && this.#confirms)) {
      if (bytes > this.#maxFileBytes) this.#checkFileSize(bytes, target);
      return NO_RELEASE;
    }
    return this.#beforeWrite(target, state, mode, bytes);
  }

  async #beforeWrite(target: NormalizedPath, state: 'missing' | 'existing' | 'dangling', mode: WriteMode, bytes: number): Promise<Release> {
    const old = state === 'existing' && (mode === 'append' || this.#quota !== undefined) ? (await this.#stat(target)).sizeBytes : 0;
    const finalSize = mode === 'append' ? old + bytes : bytes;
    this.#checkFileSize(finalSize, target);
    if (state === 'existing' && mode === 'overwrite') await this.#confirm({ op: 'overwrite', path: displayPath(target) });
    return this.#reserve({ bytes: finalSize - old, files: state === 'existing' ? 0 : 1 }, target);
  }

  /** Before a delete: nothing denied inside a directory, the file count, then `confirm`. */
  async beforeDelete(target: NormalizedPath, kind: DriverEntryKind): Promise<Release> {
    if (this.policy === undefined) return NO_RELEASE;
    const removed = await this.#inspectTree(target, kind, false);
    await this.#confirm({ op: 'delete', path: displayPath(target) });
    return this.#reserve({ bytes: -removed.bytes, files: -removed.files }, target);
  }

  /** Before a rename or copy: the source tree (denied entries, count, sizes), the quota, `confirm` when replacing. */
  async beforeTransfer(plan: PlannedTransfer): Promise<Release> {
    if (this.policy === undefined) return NO_RELEASE;
    const moved = await this.#inspectTree(plan.source, plan.sourceKind, plan.verb === 'copy');
    const replaced = this.#quota === undefined ? NOTHING : await this.#measure(plan.target, plan.targetKind);
    if (plan.targetKind !== undefined)
      await this.#confirm({ op: plan.verb === 'move' ? 'rename' : 'copy', path: displayPath(plan.source), to: displayPath(plan.target) });
    const added = plan.verb === 'copy' ? moved : NOTHING;
    return this.#reserve({ bytes: added.bytes - replaced.bytes, files: added.files - replaced.files }, plan.target);
  }

  /** After a restore: quotas measure again. */
  restored(): void {
    this.#quota?.invalidate();
  }

  /** A snapshot tree without the entries the rules deny (a patch never carries a denied file). */
  filterTree(tree: SnapshotTree): SnapshotTree {
    if (!this.#rules.active) return tree;
    const rules = this.#rules;
    const keep = (entry: SnapshotEntry): boolean => {
      const verdict = rules.judge(entry.path);
      return entry.kind === 'directory' ? verdict !== 'denied' : verdict === 'admitted';
    };
    return {
      entry: async (path) => {
        const entry = await tree.entry(path);
        return entry !== undefined && keep(entry) ? entry : undefined;
      },
      entries: async function* () {
        for await (const entry of tree.entries()) if (keep(entry)) yield entry;
      },
    };
  }

  /** A diff without the paths the rules deny. */
  filterDiff(entries: DiffEntry[]): DiffEntry[] {
    if (!this.#rules.active) return entries;
    return entries.filter((entry) => this.#rules.judge(entry.path) === 'admitted');
  }

  // ---- helpers -----------------------------------------------------------------------------------------

  /** Walks a tree an operation is about to remove or carry: no denied entry, at most `maxFilesPerOperation`. */
  async #inspectTree(path: NormalizedPath, kind: DriverEntryKind, sizes: boolean): Promise<Amount> {
    const { maxFilesPerOperation: maxFiles, maxFileBytes } = this.policy ?? {};
    const checkSizes = sizes && maxFileBytes !== undefined;
    if (kind !== 'directory') {
      if (checkSizes || this.#quota !== undefined) {
        const amount = await this.#measure(path, kind);
        if (checkSizes) this.#checkFileSize(amount.bytes, path);
        return amount;
      }
      return { bytes: 0, files: 1 };
    }
    if (!this.#rules.active && maxFiles === undefined && !checkSizes && this.#quota === undefined) return { ...NOTHING };
    const realBase = await this.#real(path);
    const total = { ...NOTHING };
    for await (const entry of this.#driver.walk(path)) {
      const real = joinPath(realBase, relativeTo(entry.path, path));
      if (this.#rules.judge(real) === 'denied' || this.#rules.judge(entry.path) === 'denied') {
        const shown = displayPath(path);
        throw new PolicyError(`denied by the workspace policy: ${shown} holds paths the policy denies`, shown);
      }
      if (entry.kind === 'directory') continue;
      total.files += 1;
      if (maxFiles !== undefined && total.files > maxFiles) {
        const shown = displayPath(path);
        throw new LimitExceededError(`more than ${maxFiles} files in one operation (policy.maxFilesPerOperation): ${shown}`, shown);
      }
      if (entry.kind === 'file' && (checkSizes || this.#quota !== undefined)) {
        const size = (await this.#stat(entry.path)).sizeBytes;
        if (checkSizes) this.#checkFileSize(size, entry.path);
        total.bytes += size;
      }
    }
    return total;
  }

  #checkFileSize(size: number, path: NormalizedPath): void {
    const max = this.policy?.maxFileBytes;
    if (max === undefined || size <= max) return;
    const shown = displayPath(path);
    throw new LimitExceededError(`file of ${size} bytes is over the policy's maxFileBytes of ${max}: ${shown}`, shown);
  }

  async #confirm(operation: PolicyOperation): Promise<void> {
    const confirm = this.policy?.confirm;
    if (confirm === undefined) return;
    let answer: unknown;
    try {
      answer = await confirm(Object.freeze({ ...operation }));
    } catch {
      answer = false;
    }
    if (answer !== true) {
      const what = operation.to === undefined ? operation.path : `${operation.path} -> ${operation.to}`;
      throw new PolicyError(`${operation.op} not confirmed by the workspace policy: ${what}`, operation.to ?? operation.path);
    }
  }

  async #reserve(delta: Amount, path: NormalizedPath): Promise<Release> {
    if (this.#quota === undefined) return NO_RELEASE;
    try {
      return await this.#quota.reserve(delta, path);
    } catch (error) {
      throw fromDriverError(error, path);
    }
  }

  async #admits(path: NormalizedPath, intent: AccessIntent): Promise<boolean> {
    const verdict = this.#rules.judge(path);
    if (verdict !== 'if-directory') return verdict === 'admitted';
    if (intent !== 'any') return intent === 'directory';
    // kind() first: the driver's stat is only for paths that exist (a link is resolved by it).
    const kind = await this.#driver.kind(path).catch(() => undefined);
    if (kind !== 'symlink') return kind === 'directory';
    return (await this.#driver.stat(path).catch(() => undefined))?.isDirectory === true;
  }

  /** Whether what the path really reaches is admitted (judged once when it is the path itself). */
  async #admitsReal(path: NormalizedPath, intent: AccessIntent): Promise<boolean> {
    const real = await this.#real(path);
    return real === path || this.#admits(real, intent);
  }

  async #admitsEntry(path: NormalizedPath, real: NormalizedPath, entry: DriverListEntry | DriverWalkEntry): Promise<boolean> {
    const intent: AccessIntent = entry.kind === 'directory' ? 'directory' : entry.kind === 'file' ? 'file' : 'any';
    if (!(await this.#admits(path, intent)) || !(await this.#admits(real, intent))) return false;
    return entry.kind !== 'symlink' || this.#admits(await this.#real(path), 'any');
  }

  /** Where the path really leads; the path itself when the driver has no links or cannot resolve it (the operation reports why). */
  async #real(path: NormalizedPath): Promise<NormalizedPath> {
    if (this.#driver.resolve === undefined || path === '') return path;
    return this.#driver.resolve(path).catch(() => path);
  }

  async #stat(path: NormalizedPath): Promise<{ sizeBytes: number }> {
    try {
      return await this.#driver.stat(path);
    } catch (error) {
      throw fromDriverError(error, path);
    }
  }

  async #measure(path: NormalizedPath, kind: DriverEntryKind | undefined): Promise<Amount> {
    try {
      return await measure(this.#driver, path, kind);
    } catch (error) {
      throw fromDriverError(error, path);
    }
  }
}

function denied(path: NormalizedPath): PolicyError {
  const shown = displayPath(path);
  return new PolicyError(`denied by the workspace policy: ${shown}`, shown);
}
