import type { Governance, Release } from '../governance/governance.js';
import type { Protection } from '../governance/protect.js';
import type { BackendDriver } from './driver.js';
import { fromDriverError } from './driver-errors.js';
import {
  DirectoryNotEmptyError,
  FileExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  IsADirectoryError,
  NotADirectoryError,
  NotSupportedError,
} from './errors.js';
import { writeOptions } from './arguments.js';
import type { WorkspaceLimits } from './limits.js';
import { checkLinkTarget } from './links.js';
import { KeyedMutex, runLocked } from './locks.js';
import { assertCreatable, displayPath, parentPath, type NormalizedPath } from './paths.js';
import type { DriverProbe } from './probe.js';
import { storeContent, type WriteContent } from './streams.js';
import { planTransfer, transfer } from './transfer.js';
import { assertWriteFits, checkBulkEntries, runBulk } from './write-files.js';
import type { DeleteOptions, MkdirOptions, WriteFilesEntry, WriteFilesResult, WriteOptions, WriteResult } from './types.js';

/** What the mutations of one workspace run through: its layered driver and the rules of its layers. */
export interface MutationContext {
  /** The driver under its layers (versions, watch): what every mutation goes through. */
  readonly driver: BackendDriver;
  readonly probe: DriverProbe;
  readonly governance: Governance;
  readonly protection: Protection;
  readonly limits: Readonly<WorkspaceLimits>;
  /** Told every path a mutation touched, even when it failed. */
  changed(paths: NormalizedPath[]): void;
}

/**
 * How a workspace changes: for each mutation, its arguments (already admitted by the workspace: read-only
 * mode, options object), the policy's path rules and `protect`, then under a lock on every path involved
 * the preconditions (with `kind()`), the policy's quota and confirmation, and the driver call, its errors
 * mapped and the snapshotter told. Nothing is half-done: every check runs before the first change.
 */
export class WorkspaceMutations {
  readonly #locks = new KeyedMutex();
  readonly #context: MutationContext;

  constructor(context: MutationContext) {
    this.#context = context;
  }

  get #driver(): BackendDriver {
    return this.#context.driver;
  }

  async write(path: string, content: WriteContent, options: WriteOptions): Promise<WriteResult> {
    const { governance, protection, probe, limits } = this.#context;
    const target = await governance.admit(path, 'file');
    await protection.guard(target);
    const shown = displayPath(target);
    const { mode, mimeType, ifVersion, executable } = writeOptions(options, shown);
    if (executable === true) this.#needs('setExecutable', 'executable files', shown);
    assertWriteFits(target, content, limits);
    await runLocked(this.#locks, [target], async () => {
      const state = await probe.writeTarget(target);
      if (ifVersion !== undefined) await probe.assertVersion(target, state, ifVersion);
      if (state === 'existing' && mode === 'create')
        throw new FileExistsError(shown, `already exists: ${shown} (mode 'create' never replaces a file)`);
      const release = await governance.beforeWrite(target, state, mode, content.byteLength);
      // `executable` reaches only a driver with executable bits (`false` is nothing to tell one without).
      const bit = executable === undefined || this.#driver.setExecutable === undefined ? {} : { executable };
      const stored = { mode, ...(mimeType === undefined ? {} : { mimeType }), ...bit };
      const write = async (): Promise<void> => {
        if (state === 'missing') await this.#prepareParent(target, options.createParents !== false);
        await storeContent(this.#driver, target, content, stored);
      };
      await this.#mutate([target], write, target, release);
    });
    return { path: shown, bytesWritten: content.byteLength, mode };
  }

  async mkdir(path: string, options: MkdirOptions): Promise<void> {
    const { governance, protection, probe, limits } = this.#context;
    const target = await governance.admit(path, 'directory');
    await protection.guard(target);
    const shown = displayPath(target);
    await runLocked(this.#locks, [target], async () => {
      const kind = await probe.kind(target);
      // A link to a directory inside the root is a directory for mkdir, as `mkdir -p` sees it.
      if (target === '' || kind === 'directory' || (kind === 'symlink' && (await probe.statFound(target)).isDirectory)) {
        if (options.existOk !== false) return;
        throw new FileExistsError(shown);
      }
      if (kind !== undefined) throw new FileExistsError(shown, `already exists and is not a directory: ${shown}`);
      assertCreatable(target, limits);
      if (options.parents === false && !(await probe.isDirectory(parentPath(target)))) {
        const parent = parentPath(target);
        if ((await probe.kind(parent)) !== undefined) throw new NotADirectoryError(displayPath(parent));
        throw new FileNotFoundError(
          displayPath(parent),
          `parent directory does not exist: ${displayPath(parent)} (pass parents: true to create it)`,
        );
      }
      await probe.assertNoFileAbove(target);
      await this.#mutate([target], () => this.#driver.mkdir(target));
    });
  }

  async delete(path: string, options: DeleteOptions): Promise<void> {
    const { governance, protection, probe } = this.#context;
    const target = await governance.admit(path, 'any');
    if (target === '') throw new InvalidArgumentError('cannot delete the workspace root', '/');
    await protection.guard(target);
    const recursive = options.recursive === true;
    await runLocked(this.#locks, [target], async () => {
      const kind = await probe.kind(target);
      if (kind === undefined) throw new FileNotFoundError(displayPath(target));
      await protection.guardTree(target, kind);
      if (kind === 'directory' && !recursive && (await probe.call(target, () => this.#driver.list(target))).length > 0)
        throw new DirectoryNotEmptyError(displayPath(target));
      const release = await governance.beforeDelete(target, kind);
      await this.#mutate([target], () => this.#driver.remove(target, { recursive }), target, release);
    });
  }

  async transfer(verb: 'move' | 'copy', fromInput: string, toInput: string, overwrite: boolean, recursive: boolean): Promise<void> {
    const { governance, protection, probe, limits } = this.#context;
    const source = await governance.admit(fromInput, 'any');
    const target = await governance.admit(toInput, 'any');
    if (verb === 'move') await protection.guard(source);
    await protection.guard(target);
    await runLocked(this.#locks, [source, target], async () => {
      const checks = { kind: (path: NormalizedPath) => probe.kind(path), walk: (path: NormalizedPath) => this.#driver.walk(path) };
      const plan = await planTransfer(checks, limits, verb, source, target, overwrite, recursive);
      if (plan === undefined) return;
      if (verb === 'move') await protection.guardTree(source, plan.sourceKind);
      await protection.guardTree(target, plan.targetKind);
      const release = await governance.beforeTransfer({ verb, ...plan });
      const run = () => this.#prepareParent(target, true).then(() => transfer(this.#driver, verb, plan));
      await this.#mutate(verb === 'move' ? [source, target] : [target], run, target, release);
    });
  }

  /**
   * `setExecutable`: the file a path names (a link followed inside the root) gets or loses its executable
   * bit; a directory is EISDIR. The policy sees it as a write of the file (its rules, `confirm`), no bytes.
   */
  async setExecutable(path: string, executable: unknown): Promise<void> {
    const { governance, protection, probe } = this.#context;
    const target = await governance.admit(path, 'file');
    const shown = displayPath(target);
    if (typeof executable !== 'boolean') throw new InvalidArgumentError('executable must be a boolean', shown);
    const setExecutable = this.#needs('setExecutable', 'executable files', shown);
    await protection.guard(target);
    await runLocked(this.#locks, [target], async () => {
      await probe.expectFile(target);
      const release = await governance.beforeWrite(target, 'existing', 'overwrite', 0);
      await this.#mutate([target], () => setExecutable(target, executable), target, release);
    });
  }

  /** `symlink`: a new link at `path` (missing; parents made) holding `target` as given. */
  async symlink(linkTarget: unknown, path: string): Promise<void> {
    const { governance, protection, probe, limits } = this.#context;
    const target = await governance.admit(path, 'any');
    const shown = displayPath(target);
    const refused = checkLinkTarget(linkTarget);
    if (refused !== undefined) throw new InvalidArgumentError(refused, shown);
    const symlink = this.#needs('symlink', 'symlinks', shown);
    if (target === '') throw new FileExistsError('/');
    await protection.guard(target);
    assertCreatable(target, limits);
    await runLocked(this.#locks, [target], async () => {
      if ((await probe.kind(target)) !== undefined) throw new FileExistsError(shown);
      const release = await governance.beforeWrite(target, 'missing', 'create', Buffer.byteLength(linkTarget as string));
      const create = async (): Promise<void> => {
        await this.#prepareParent(target, true);
        await symlink(linkTarget as string, target);
      };
      await this.#mutate([target], create, target, release);
    });
  }

  /**
   * `writeFiles`: every entry checked first; then the driver's bulk primitive when it has one and no policy
   * needs to judge each write (sizes, quota, confirm), else entry by entry through the ordinary calls.
   */
  async writeFiles(entries: readonly WriteFilesEntry[], policed: boolean): Promise<WriteFilesResult> {
    const { governance, protection, limits } = this.#context;
    // Synchronous when neither the policy nor the protect rule needs I/O (the bulk path of every hydration): no closure per entry then.
    const guarded = (admitted: NormalizedPath): NormalizedPath | Promise<NormalizedPath> => {
      const guarding = protection.guard(admitted);
      return guarding === undefined ? admitted : guarding.then(() => admitted);
    };
    const admit = (path: unknown, intent: 'file' | 'directory'): NormalizedPath | Promise<NormalizedPath> => {
      const target = governance.admit(path, intent);
      return typeof target === 'string' ? guarded(target) : target.then(guarded);
    };
    const checked = await checkBulkEntries(entries, limits, this.#driver, admit);
    for (const entry of checked.entries) {
      if (entry.kind === 'symlink') this.#needs('symlink', 'symlinks', displayPath(entry.path));
      if (entry.kind === 'file' && entry.executable) this.#needs('setExecutable', 'executable files', displayPath(entry.path));
    }
    const paths = checked.entries.map((entry) => entry.path);
    if (this.#driver.writeFiles !== undefined && !policed)
      await runLocked(this.#locks, paths, () => this.#mutate(paths, () => runBulk(this.#driver, checked.entries)));
    else
      for (const entry of checked.entries) {
        if (entry.kind === 'file') await this.write(entry.path, entry.content, entry.executable ? { executable: true } : {});
        else if (entry.kind === 'directory') await this.mkdir(entry.path, {});
        else await this.#replaceWithLink(entry.target, entry.path);
      }
    return checked.result;
  }

  /** A bulk entry's link, entry by entry: what stands at the path (a file or a link) is replaced, as the bulk primitive does. */
  async #replaceWithLink(linkTarget: string, path: NormalizedPath): Promise<void> {
    const kind = await this.#context.probe.kind(path);
    if (kind === 'directory') throw new IsADirectoryError(displayPath(path));
    if (kind !== undefined) await this.delete(path, {});
    await this.symlink(linkTarget, path);
  }

  /** The driver's optional primitive, or `NotSupportedError` naming what this backend lacks. */
  #needs<K extends 'setExecutable' | 'symlink'>(primitive: K, what: string, shown: string): NonNullable<BackendDriver[K]> {
    const method = this.#driver[primitive];
    if (typeof method !== 'function') throw new NotSupportedError(`the ${this.#driver.name} backend has no ${what}: ${shown}`, shown);
    return method.bind(this.#driver) as NonNullable<BackendDriver[K]>;
  }

  /** Makes sure the parent of a path about to be created is a directory (creating it when allowed). */
  async #prepareParent(target: NormalizedPath, createParents: boolean): Promise<void> {
    const { probe } = this.#context;
    const parent = parentPath(target);
    if (await probe.parentReady(target)) return;
    await probe.assertNoFileAbove(parent);
    if (!createParents)
      throw new FileNotFoundError(
        displayPath(parent),
        `parent directory does not exist: ${displayPath(parent)} (pass createParents: true to create it)`,
      );
    await this.#mutate([parent], () => this.#driver.mkdir(parent));
  }

  /** A driver mutation: errors mapped, the policy's reservation released on failure, the snapshotter told (even on failure). */
  async #mutate<T>(paths: NormalizedPath[], task: () => Promise<T>, errorPath = paths[0] as NormalizedPath, release?: Release): Promise<T> {
    try {
      return await task();
    } catch (error) {
      release?.();
      throw fromDriverError(error, errorPath);
    } finally {
      this.#context.changed(paths);
    }
  }
}
