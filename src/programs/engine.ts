import type { ExecLimits } from './types.js';

/**
 * Where a program runs. An engine shows `lower` (read-only) merged with the staging layer `upper` at
 * `/workspace`, runs `argv` there in isolation, and leaves every change the program made in `upper` in the
 * overlay format (files and directories as written, a deleted entry as a character device 0/0 "whiteout",
 * a directory that replaced one below as an opaque directory), which {@link captureChanges} reads. The
 * bubblewrap engine does it with a kernel overlay; a remote engine (docs/scaling.md) would run elsewhere
 * and bring its upper layer back in the same format.
 */
export interface ExecEngine {
  readonly name: string;
  /** Resolves when programs can run here; `NotSupportedError` (`ENOTSUP`) saying what to install otherwise. */
  available(): Promise<void>;
  run(request: EngineRequest): Promise<EngineOutcome>;
}

export interface StagingDirs {
  /** The staging layer: what the program changed. Empty before the run. */
  upper: string;
  /** The overlay's work directory (same file system as `upper`). */
  work: string;
  /** An empty directory the engine may mount the merged view on. */
  merged: string;
}

/** A path the workspace's policy hides (relative to the lower tree), shown to the program as empty. */
export interface HiddenPath {
  path: string;
  kind: 'file' | 'directory';
}

export interface EngineRequest {
  /** The tree the program sees at `/workspace`, never written. */
  lower: string;
  staging: StagingDirs;
  /** Entries of `lower` the program must not read: an empty directory or file is shown in their place. */
  hidden?: readonly HiddenPath[];
  argv: readonly string[];
  /** Directory inside the workspace, relative (`''` is `/workspace`). */
  cwd: string;
  env: Readonly<Record<string, string>>;
  stdin?: Uint8Array;
  network: 'none' | 'host';
  timeoutMs: number;
  signal?: AbortSignal;
  maxOutputBytes: number;
  limits: Required<Pick<ExecLimits, 'fileBytes' | 'processes'>> & Pick<ExecLimits, 'cpuSeconds'>;
}

export interface EngineOutcome {
  /** How the run ended: on its own, at the deadline, by the caller's abort, or at the CPU-time limit. */
  ended: 'exited' | 'timeout' | 'aborted' | 'cpu-limit';
  exitCode: number;
  signal?: string;
  stdout: Uint8Array;
  stderr: Uint8Array;
  truncated: boolean;
  /** Host paths the engine used that must never reach a model (scrubbed from messages). */
  hostPaths: readonly string[];
}
