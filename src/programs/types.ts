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
  /**
   * Most bytes of file content one run may change in total (new and rewritten files, whole), checked while its
   * changes are read, before any is applied: past it the call fails and nothing is applied. Default 2 GiB,
   * what one file may already hold (`fileBytes`): a memory workspace keeps every byte in the server's memory.
   */
  changedBytes?: number;
  /**
   * Most entries one run may leave in its staging layer (each file, link and directory it made or changed, each
   * deletion, and each directory it wrote in), checked the same way. Default 500,000: a large install or build
   * (100k files) passes; millions of empty files, each an entry the server holds, do not.
   */
  changedEntries?: number;
}
