import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createOwnedTemp } from '../backends/host/owned-temp.js';
import { InvalidArgumentError, NotSupportedError } from '../workspace/errors.js';
import type { EngineOutcome, EngineRequest, ExecEngine, HiddenPath } from './engine.js';
import { FIRST_PASSED_FD, openEtc } from './etc-files.js';
import { OutputSink } from './output-sink.js';
import { DEFAULT_ETC_ENTRIES, DEFAULT_SYSTEM_PATHS, SANDBOX_UID, systemArgs, writeEtc } from './system-view.js';
import { StagingArea } from './staging.js';

export interface BwrapEngineOptions {
  /** Host directories shown read-only (default /usr, /bin, /sbin, /lib*; add e.g. /opt/toolchain). */
  systemPaths?: readonly string[];
  /** Entries of the host's /etc shown read-only (default: linker cache, alternatives, certificates, time zone …). */
  etcEntries?: readonly string[];
  /** The `bwrap` program (default: found on the PATH). */
  bwrapPath?: string;
}

/** What to install, said once for every way the engine can be missing. */
const INSTALL =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) and util-linux, ' +
  'on Linux with unprivileged user namespaces enabled (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)';

/** The link to the lower tree, made in the run's staging directory: the overlay's options name it, not the tree. */
const LOWER_LINK = '.lower';

/**
 * Sets up the namespaces bubblewrap runs in: inside `unshare --user --map-root-user --mount --pid` it mounts
 * the overlay (`userxattr`: unprivileged, whiteouts and opaque marks kept as `user.overlay.*`) from the run's
 * staging directory, every layer named relative to it (the lower tree through the link {@link LOWER_LINK}):
 * the options the kernel shows in the sandbox's /proc/self/mountinfo hold no host path, and no host path with
 * a `,` or `:` reaches them. It caps the pid namespace's `pid_max` (Linux >= 6.14: a process cap that holds
 * even where RLIMIT_NPROC does not, for a root-owned server; written through the namespace's own /proc from
 * `--mount-proc`), closes every descriptor above the ones it was handed (the server may have inherited some
 * without close-on-exec, and a program must not write to its parent's pipes), then becomes bubblewrap.
 * It sets the limits last, with bash's own `ulimit` (a `prlimit` run cost a process start): file size in KiB,
 * processes, and CPU seconds (soft, then SIGKILL a second later; `-`: none). Arguments: the run's directory,
 * the names of upper, work and merged in it, pid_max (0: leave), the highest descriptor handed over, the
 * three limits, then the command. bash, not sh: dash names only descriptors 0 to 9, and its `ulimit` has no
 * `-u` and counts `-f` in 512-byte blocks.
 */
const WRAPPER = [
  'set -e',
  'for fd in /proc/self/fd/*; do n=${fd##*/}; if [ "$n" -gt "$6" ]; then eval "exec $n>&-" || true; fi; done',
  'cd "$1"',
  `mount -t overlay overlay -o "lowerdir=${LOWER_LINK},upperdir=$2,workdir=$3,userxattr,volatile" "$4"`,
  'cd /',
  'if [ "$5" != 0 ]; then echo "$5" 2>/dev/null >/proc/sys/kernel/pid_max || true; fi',
  'ulimit -f "$7"',
  'ulimit -u "$8"',
  'if [ "$9" != - ]; then ulimit -S -t "$9"; ulimit -H -t $(($9 + 1)); fi',
  'shift 9',
  'exec "$@"',
].join('\n');

/** Characters the overlay's option string cannot hold (separators), refused in the staging names. */
const UNSAFE_OPTION_CHARS = /[,:\\\n]/;

/** bwrap exits with 128 + the signal that ended its child: SIGXCPU is the CPU-time limit. */
const SIGXCPU_STATUS = 128 + 24;

/**
 * The bubblewrap engine (Linux): a kernel overlay over the lower tree whose upper layer is the staging
 * directory, mounted in user and mount namespaces, with bubblewrap (0.8 and later) run inside binding the
 * merged view at `/workspace`. The program runs as an unprivileged user in its own pid, network (unless
 * `network: 'host'`), ipc and uts namespaces, sees the system directories read-only, a minimal /etc, a
 * private /tmp, its own /proc and a minimal /dev, with a cleared environment. Killing the sandbox's first
 * process ends its pid namespace, so nothing it started (`setsid`, `&`) survives the call.
 */
export function bwrapEngine(options: BwrapEngineOptions = {}): ExecEngine {
  const systemPaths = stringList(options.systemPaths, DEFAULT_SYSTEM_PATHS, 'systemPaths', true);
  const etcEntries = stringList(options.etcEntries, DEFAULT_ETC_ENTRIES, 'etcEntries', false);
  let tools: Promise<Tools> | undefined;
  let etc: ReturnType<typeof writeEtc> | undefined;

  const engine: ExecEngine = {
    name: 'bwrap',
    available() {
      tools ??= probe(options.bwrapPath, () => engine);
      return tools.then(() => undefined);
    },
    async run(request) {
      tools ??= probe(options.bwrapPath, () => engine);
      const found = await tools;
      etc ??= writeEtc(createOwnedTemp('sandbox-etc'));
      return runSandboxed(found, request, { systemPaths, etcEntries, etcDir: etc[request.network], emptyFile: etc.empty });
    },
  };
  return engine;
}

interface Tools {
  bash: string;
  setpriv: string;
  unshare: string;
  bwrap: string;
}

function stringList(value: unknown, fallback: readonly string[], name: string, absolute: boolean): readonly string[] {
  if (value === undefined) return fallback;
  if (
    !Array.isArray(value) ||
    value.some(
      (item) => typeof item !== 'string' || item === '' || item.includes('\0') || (absolute ? !item.startsWith('/') : item.includes('/')),
    )
  ) {
    throw new InvalidArgumentError(`bwrapEngine: ${name} must be a list of ${absolute ? 'absolute paths' : 'names'}`);
  }
  return Object.freeze([...(value as string[])]);
}

/** The programs the engine needs, then one real sandboxed run (user namespaces may be disabled). */
async function probe(bwrapPath: string | undefined, self: () => ExecEngine): Promise<Tools> {
  if (process.platform !== 'linux') throw new NotSupportedError(`running programs needs Linux: ${INSTALL}`);
  const bwrap = bwrapPath ?? which('bwrap');
  const unshare = which('unshare');
  const setpriv = which('setpriv');
  const bash = which('bash');
  if (bwrap === undefined || !isExecutable(bwrap)) throw new NotSupportedError(`running programs needs bubblewrap (bwrap): ${INSTALL}`);
  if (unshare === undefined || setpriv === undefined)
    throw new NotSupportedError(`running programs needs unshare and setpriv (util-linux): ${INSTALL}`);
  if (bash === undefined) throw new NotSupportedError(`running programs needs bash: ${INSTALL}`);
  const tools = { bash, setpriv, unshare, bwrap };
  const lower = createOwnedTemp('sandbox-probe');
  const area = new StagingArea();
  const etc = writeEtc(lower);
  try {
    const staging = area.create();
    const outcome = await runSandboxed(
      tools,
      {
        lower,
        staging,
        argv: ['/bin/sh', '-c', 'echo ok'],
        cwd: '',
        env: {},
        network: 'none',
        timeoutMs: 10_000,
        maxOutputBytes: 4096,
        limits: { fileBytes: 1024 * 1024, processes: 64 },
      },
      { systemPaths: DEFAULT_SYSTEM_PATHS, etcEntries: DEFAULT_ETC_ENTRIES, etcDir: etc.none, emptyFile: etc.empty },
    );
    if (outcome.exitCode !== 0 || new TextDecoder().decode(outcome.stdout) !== 'ok\n') {
      const reason = new TextDecoder().decode(outcome.stderr).split('\n')[0] ?? '';
      throw new NotSupportedError(`the ${self().name} sandbox cannot start here (${reason.replace(/\/\S+/g, '…')}): ${INSTALL}`);
    }
    return tools;
  } finally {
    area.dispose();
    fs.rmSync(lower, { recursive: true, force: true });
  }
}

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').concat(['/usr/sbin', '/usr/bin', '/sbin', '/bin'])) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    fs.accessSync(path, fs.constants.X_OK);
    return fs.statSync(path).isFile();
  } catch {
    return false;
  }
}

interface ViewSettings {
  systemPaths: readonly string[];
  etcEntries: readonly string[];
  etcDir: string;
  /** An empty read-only file, shown in place of a hidden one. */
  emptyFile: string;
}

function runSandboxed(tools: Tools, request: EngineRequest, view: ViewSettings): Promise<EngineOutcome> {
  const { staging } = request;
  const runDir = dirname(staging.upper);
  const layers = [staging.upper, staging.work, staging.merged];
  if (layers.some((dir) => dirname(dir) !== runDir || UNSAFE_OPTION_CHARS.test(basename(dir))))
    throw new InvalidArgumentError('the staging directories must be siblings whose names an overlay mount can take (no , : \\)');
  fs.symlinkSync(request.lower, join(runDir, LOWER_LINK));
  const network = request.network === 'host';
  const system = systemArgs({ ...view, network });
  const env: Record<string, string> = { PATH: system.path, HOME: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb', USER: 'user', ...request.env };
  const workdir = request.cwd === '' ? '/workspace' : `/workspace/${request.cwd}`;
  const etc = openEtc(system.etc);
  // bubblewrap reads its options from a pipe (`--args`): they name host paths (the merged tree), and the
  // sandbox's pid 1 is bubblewrap's own process, whose command line a program can read in /proc/1/cmdline.
  const bwrapOptions = [
    '--unshare-user',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_UID),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--hostname',
    'sandbox',
    '--unshare-cgroup-try',
    ...(network ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]),
    ...system.args,
    ...etc.args,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    staging.merged,
    '/workspace',
    ...hiddenArgs(request.hidden ?? [], view.emptyFile),
    '--chdir',
    workdir,
  ];
  const argsFd = FIRST_PASSED_FD + etc.fds.length;
  const limits = request.limits;
  // The kernel's file size limit guards the disk while the program runs; capture holds the exact limit (a file of
  // `fileBytes` or more fails the call). So it may be higher: bubblewrap writes its /etc copies under it too, and
  // bash's `ulimit -f` counts KiB (rounded up, a file cut there is still at least `fileBytes` long).
  const fileKiB = Math.ceil(Math.max(limits.fileBytes, etc.largest) / 1024);
  // pid_max counts pids, and after wrapping round a namespace allocates from 300 up: this cap leaves room for `processes`.
  const pidMax = limits.processes + 300;
  // setpriv: the sandbox dies with this process even when it is killed with SIGKILL (its parent-death signal).
  const args = [
    '--pdeathsig',
    'KILL',
    '--',
    tools.unshare,
    '--user',
    '--map-root-user',
    '--mount',
    '--pid',
    '--fork',
    '--kill-child',
    '--mount-proc',
    '--',
    tools.bash,
    '-c',
    WRAPPER,
    'sessionfs-sandbox',
    runDir,
    ...layers.map((dir) => basename(dir)),
    String(pidMax),
    String(argsFd),
    String(fileKiB),
    String(limits.processes),
    limits.cpuSeconds === undefined ? '-' : String(limits.cpuSeconds),
    tools.bwrap,
    '--args',
    String(argsFd),
    '--',
    ...request.argv,
  ];

  return new Promise<EngineOutcome>((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      // The /etc files go down the chain as fds 3…; bwrap reads them, the child holds its own copies.
      child = spawn(tools.setpriv, args, {
        stdio: [request.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...etc.fds, 'pipe'],
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
        detached: true,
      });
    } finally {
      etc.close();
    }
    const options = child.stdio[argsFd] as Writable;
    options.on('error', () => undefined); // a sandbox that failed to start reads none of it
    options.end(bwrapOptions.map((arg) => `${arg}\0`).join(''));
    const stdout = new OutputSink(request.maxOutputBytes);
    const stderr = new OutputSink(request.maxOutputBytes);
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    let ended: EngineOutcome['ended'] = 'exited';
    const kill = (reason: EngineOutcome['ended']) => {
      if (ended === 'exited') ended = reason;
      killTree(child.pid);
    };
    const timer = setTimeout(() => kill('timeout'), request.timeoutMs);
    const onAbort = () => kill('aborted');
    if (request.signal?.aborted === true) onAbort();
    else request.signal?.addEventListener('abort', onAbort, { once: true });
    if (request.stdin !== undefined && child.stdin !== null) {
      child.stdin.on('error', () => undefined); // the program may exit without reading it all
      child.stdin.end(request.stdin);
    }
    child.once('error', (error) => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      reject(new NotSupportedError(`the sandbox could not start (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${INSTALL}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      // What a killed sandbox left running dies with its pid namespace; the group kill covers the wrapper.
      killTree(child.pid);
      const exitCode = code ?? 128 + (signal === null ? 0 : (SIGNAL_NUMBERS[signal] ?? 0));
      if (ended === 'exited' && limits.cpuSeconds !== undefined && exitCode === SIGXCPU_STATUS) ended = 'cpu-limit';
      resolve({
        ended,
        exitCode,
        ...(signal === null ? {} : { signal }),
        stdout: stdout.bytes(),
        stderr: stderr.bytes(),
        truncated: stdout.truncated || stderr.truncated,
        hostPaths: [request.lower, staging.upper, staging.merged],
      });
    });
  });
}

/** What stands in for each path the policy hides: an empty read-only directory, or an empty read-only file. */
function hiddenArgs(hidden: readonly HiddenPath[], emptyFile: string): string[] {
  return hidden.flatMap(({ path, kind }) =>
    kind === 'directory'
      ? ['--tmpfs', `/workspace/${path}`, '--remount-ro', `/workspace/${path}`]
      : ['--ro-bind', emptyFile, `/workspace/${path}`],
  );
}

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGPIPE: 13, SIGTERM: 15 };

/** SIGKILL to the sandbox's process group: its first process goes, and with it the pid namespace. */
function killTree(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
