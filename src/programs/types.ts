/** `session.exec(command, options)`: see docs/programs.md. */
export interface ExecOptions {
  /** Workspace directory to start in (default the root, `/workspace` inside the sandbox). */
  cwd?: string;
  /** Variables added to the scrubbed environment (PATH, HOME=/tmp, LANG, TERM=dumb). */
  env?: Record<string, string>;
  /** Bytes (or text, as UTF-8) given to the program's standard input; default none (`/dev/null`). */
  stdin?: string | Uint8Array;
  /** Deadline in milliseconds; default 120,000. Past it the whole process tree is killed and nothing is applied. */
  timeoutMs?: number;
  /** Aborting kills the whole process tree; nothing is applied. */
  signal?: AbortSignal;
  /** `'none'` (default): no network at all. `'host'`: the host's network. An orchestrator's choice, never a model's. */
  network?: 'none' | 'host';
  /** Most bytes kept of stdout, and separately of stderr; the rest is read and dropped (`truncated`). Default 8 MiB. */
  maxOutputBytes?: number;
}

/** Workspace paths (files, symlinks and directories) a program changed, each list sorted. */
export interface ExecChanges {
  created: string[];
  modified: string[];
  /** The topmost paths removed (a removed directory is listed, not its content). */
  deleted: string[];
}

export interface ExecResult {
  /** The program's exit status (128 + n when a signal ended it inside the sandbox). */
  exitCode: number;
  /** Set when the sandbox itself was ended by a signal. */
  signal?: string;
  stdout: string;
  stderr: string;
  /** What the program changed, now applied to the workspace. */
  changed: ExecChanges;
  durationMs: number;
  /** True when stdout or stderr passed `maxOutputBytes` and was cut. */
  truncated: boolean;
}

/** Resource limits of one program run (the sandbox's whole process tree). */
export interface ExecLimits {
  /** Largest file the program may write (RLIMIT_FSIZE); reaching it fails the call. Default 2 GiB. */
  fileBytes?: number;
  /** Most processes at once (RLIMIT_NPROC, and the pid namespace's `pid_max` where the kernel has it). Default 512. */
  processes?: number;
  /** CPU seconds (RLIMIT_CPU); passing them fails the call. Default none (the deadline bounds wall time). */
  cpuSeconds?: number;
}
