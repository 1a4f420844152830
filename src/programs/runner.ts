import * as fs from 'node:fs';
import { AbortError, LimitExceededError, NotADirectoryError, TimeoutError } from '../workspace/errors.js';
import { normalizePath } from '../workspace/paths.js';
import type { WorkspacePolicy } from '../governance/policy.js';
import { releaseSnapshots } from '../workspace/snapshot-queue.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { applyChanges } from './apply.js';
import { bwrapEngine } from './bwrap-engine.js';
import { captureChanges, type Capture } from './capture.js';
import type { EngineOutcome, ExecEngine } from './engine.js';
import { WorkspaceMirror } from './mirror.js';
import { hiddenPaths } from './hidden.js';
import { StagingArea } from './staging.js';
import type { ExecLimits, ExecResult } from './types.js';
import { validateExecOptions, validateLimits } from './validate.js';

export interface ProgramRunnerOptions {
  /** Where programs run; default {@link bwrapEngine}. */
  engine?: ExecEngine;
  limits?: ExecLimits;
}

/** Default largest file a program may write: large build outputs pass, a runaway writer stops. */
const DEFAULT_FILE_BYTES = 2 * 1024 ** 3;
/**
 * Default most bytes of file content one run may change: what one file may already hold, so many files under
 * `fileBytes` (`truncate -s 2000M a b c d e`: 10 GB of sparse files, no disk used) cannot make the server
 * take more than one could, which a memory workspace holds in memory.
 */
const DEFAULT_CHANGED_BYTES = 2 * 1024 ** 3;
/** Default most entries one run may leave: five times a large `node_modules` (100k files). */
const DEFAULT_CHANGED_ENTRIES = 500_000;
const DEFAULT_PROCESSES = 512;

/**
 * Runs programs on one session's workspace: the lower tree is the host root itself (host backend) or a
 * mirror kept in sync with the workspace (every other backend); the program writes into a fresh staging
 * layer; when it ends its changes are read from there and applied through the protocol as one change.
 * A run stopped by its deadline, an abort or a limit applies nothing.
 */
export class ProgramRunner {
  readonly #engine: ExecEngine;
  readonly #limits: ExecLimits;
  #mirror: { owner: object; mirror: WorkspaceMirror } | undefined;
  readonly #staging = new StagingArea();

  constructor(options: ProgramRunnerOptions = {}) {
    this.#engine = options.engine ?? bwrapEngine();
    this.#limits = validateLimits(options.limits);
  }

  /**
   * `workspace`: what the changes are applied through (a call's view inside a tool call); `owner`: the
   * workspace itself (read for the mirror, and whose snapshots are released).
   */
  async run(workspace: SnapshotableWorkspace, owner: SnapshotableWorkspace, command: unknown, rawOptions: unknown): Promise<ExecResult> {
    const started = performance.now();
    const { argv, options } = validateExecOptions(command, rawOptions);
    await this.#engine.available();
    if (options.signal?.aborted === true) throw new AbortError('the program was aborted before it started');
    const cwd = normalizePath(options.cwd ?? '');
    const where = await workspace.stat(cwd);
    if (!where.isDirectory) throw new NotADirectoryError(cwd);
    const lower = await this.#lower(owner);
    const staging = this.#staging.create();
    try {
      const limits = {
        fileBytes: this.#limits.fileBytes ?? DEFAULT_FILE_BYTES,
        processes: this.#limits.processes ?? DEFAULT_PROCESSES,
        ...(this.#limits.cpuSeconds === undefined ? {} : { cpuSeconds: this.#limits.cpuSeconds }),
      };
      const outcome = await this.#engine.run({
        lower,
        staging,
        hidden: hiddenPaths((owner as { policy?: Readonly<WorkspacePolicy> }).policy, lower),
        argv,
        cwd,
        env: options.env ?? {},
        ...(options.stdin === undefined
          ? {}
          : { stdin: typeof options.stdin === 'string' ? new TextEncoder().encode(options.stdin) : options.stdin }),
        network: options.network ?? 'none',
        timeoutMs: options.timeoutMs ?? 120_000,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        maxOutputBytes: options.maxOutputBytes ?? 8 * 1024 * 1024,
        limits,
      });
      stopped(outcome, options.timeoutMs ?? 120_000);
      // A program that wrote something: the snapshot its changes are applied under is taken while they are read.
      const before =
        workspace.readOnly || fs.readdirSync(staging.upper).length === 0 ? undefined : workspace.snapshot({ tag: 'before a program run' });
      before?.catch(() => undefined); // awaited below; a failure surfaces there
      let captured: Capture;
      try {
        captured = await captureChanges(staging.upper, lower, {
          fileBytes: limits.fileBytes,
          changedBytes: this.#limits.changedBytes ?? DEFAULT_CHANGED_BYTES,
          changedEntries: this.#limits.changedEntries ?? DEFAULT_CHANGED_ENTRIES,
        });
      } catch (error) {
        await before?.then((snapshot) => releaseSnapshots(owner, [snapshot])).catch(() => undefined);
        throw error;
      }
      await applyChanges(workspace, captured.changes, { owner, ...(before === undefined ? {} : { before }) });
      if (this.#mirror?.owner === owner) this.#mirror.mirror.noteDirectories(captured.changes);
      const hide = (bytes: Uint8Array) => hideHostPaths(new TextDecoder().decode(bytes), [...outcome.hostPaths, this.#staging.dir]);
      return {
        exitCode: outcome.exitCode,
        ...(outcome.signal === undefined ? {} : { signal: outcome.signal }),
        stdout: hide(outcome.stdout),
        stderr: hide(outcome.stderr),
        changed: captured.summary,
        durationMs: Math.round(performance.now() - started),
        truncated: outcome.truncated,
      };
    } finally {
      this.#staging.discard(staging);
    }
  }

  /** The tree programs see: a host workspace's own root, or this session's mirror brought up to date. */
  async #lower(owner: SnapshotableWorkspace): Promise<string> {
    if (owner.backend === 'host') return owner.root;
    if (this.#mirror?.owner !== owner) {
      this.#mirror?.mirror.dispose();
      this.#mirror = { owner, mirror: new WorkspaceMirror() };
    }
    await this.#mirror.mirror.sync(owner);
    return this.#mirror.mirror.dir;
  }

  /** Removes the mirror (a session's reset or dispose). */
  dispose(): void {
    this.#mirror?.mirror.dispose();
    this.#mirror = undefined;
    this.#staging.dispose();
  }
}

/** A run that did not end on its own applies nothing: the failure says why. */
function stopped(outcome: EngineOutcome, timeoutMs: number): void {
  if (outcome.ended === 'timeout') {
    throw new TimeoutError(
      `the program did not finish within ${timeoutMs} ms and was stopped with everything it started; nothing it changed was kept`,
    );
  }
  if (outcome.ended === 'aborted')
    throw new AbortError('the program was aborted and stopped with everything it started; nothing it changed was kept');
  if (outcome.ended === 'cpu-limit')
    throw new LimitExceededError('the program used up its CPU time limit and was stopped; nothing it changed was kept');
}

/** The engine's own host paths (a mount failure names them) never reach a caller. */
function hideHostPaths(text: string, paths: readonly string[]): string {
  let out = text;
  for (const path of paths) if (path !== '') out = out.split(path).join('…');
  return out;
}
