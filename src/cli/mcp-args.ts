import { MountSyntaxError, parseMountValue, readMountConfig, type MountArgument } from './mount-args.js';
import { STORE_OPTIONS, STORE_USAGE } from './sessions-args.js';
import { sessionName, storeFlags, type StoreFlagValues, type StoreFlags } from './store-flags.js';
import { GENERAL_USAGE, UsageError } from './usage-error.js';

export const MCP_USAGE = `Usage: sessionfs mcp [options]

Serve the workspace tool suite (plus snapshot, restore, diff) over MCP on stdio, on one session, until the
client disconnects. Every call runs through session.runTool: a failed call is rolled back.

Options:
  --backend <kind>     memory (default) or host (a sandboxed temp directory with git snapshots). Without it
                       (and without --patch-out), directory mounts are shown in place as with --overlay;
                       --backend memory copies them in at start.
  --root <dir>         Work on this existing host directory (implies --backend host); snapshots live outside
                       it. With --mount, each mount is shown beside it, never copied into it.
  --mount <src>[:/path][:ro]
                       Host directory or file to show in the workspace: at /path (default its base name);
                       :ro (a directory) refuses the model's writes (EROFS) and is never written back. Repeatable.
  --mount-config <file>  JSON mount table: [{ hostPath, path?, include?, exclude?, maxBytes?, readOnly?,
                       gitignore? }] or { "mounts": [...], "allow": [...] } (paths relative to the file). Added
                       after --mount.
  --overlay            Show the mounts lazily (read in place, never written; changes kept in memory) instead
                       of copying them in: the first tool call comes at once however big they are.
  --include <glob>     Only copy matching files of the --mount before it. Repeatable.
  --exclude <glob>     Skip matching paths of the --mount before it (wins over --include). Repeatable.
  --max-bytes <n>      Refuse to start if the --mount before it holds more than n bytes.
  --include-ignored    Copy the mounts into memory with what their .gitignore files ignore (node_modules,
                       build output); a copy otherwise leaves it out, each ignored directory reported once.
                       .git stays out.
  --allow <root>       Host directory that mounts may come from. Repeatable; required with --mount.
  --read-only          Show the mounts, then refuse every change: only the tools that read are listed.
  --read-before-write  Refuse write_file/edit_file on an existing file the model has not read.
  --quiet              No progress on stderr (hydration, the patch, write-back); it is off anyway when
                       stderr is not a terminal, unless --progress is given.
  --progress           Progress on stderr even when it is not a terminal (a line per update, counts only).
  --search-timeout <ms>  Deadline of one glob or grep call (default 10000): past it the call fails with ETIMEDOUT.
  --shell              Add the bash tool: a bash interpreter over the workspace (no host program, no network).
  --shell sandbox      Add the bash tool running real programs (node, git, compilers …) in a sandbox, on
                       any backend; what they change is a snapshotted, reversible change. See docs/programs.md.
  --shell-host         Add the bash tool running real programs (an allow-list) in the root of a host
                       workspace. Not a security boundary: see docs/shell.md.
  --patch-out <file>   When the server stops (client gone, SIGINT, SIGTERM), write the session's git patch
                       (from the state it started in; \`git apply --binary\` applies it) to this file. Its
                       directory must exist and be writable (checked at start).
  --write-back         When the server stops, write the changes back to the mounts (not :ro ones; they must
                       exist and be writable, checked at start). A host file changed meanwhile is never
                       overwritten: it is left and reported on stderr (status 1).
  --history-tools      Add the history, undo and redo tools: the session's turns, and undoing or redoing the
                       model's last turn (each call is a turn: MCP does not say which calls one response made).
  --allow-write-back   Let the write_back tool write to the mounts without asking when the client cannot
                       ask the user (no MCP elicitation); a client that can always asks first. Conflicts
                       are never overwritten. The mounts are checked at start as for --write-back.
  --session <name>     Keep the session in a session store under this name, published after every successful
                       call, and resume it when a server starts again with the same name (see sessionfs
                       sessions). One server per session: a second one exits with status 3. With --mount
                       or --mount-config, a new session is seeded from the mounts; a session that exists
                       resumes as stored and the mounts are not read again (said on stderr). Not with
                       --overlay, --root, --backend, a :ro mount, --read-only with mounts, --write-back or
                       --allow-write-back (write a stored session back with sessionfs sessions write-back).

${STORE_USAGE}

${GENERAL_USAGE}`;

/** The flags only `mcp` takes (`--patch-out` it shares with sessions); `--shell sandbox` arrives as `--shell-sandbox`. */
export const MCP_OPTIONS = {
  backend: { type: 'string' },
  root: { type: 'string' },
  mount: { type: 'string', multiple: true },
  'mount-config': { type: 'string' },
  overlay: { type: 'boolean' },
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  'max-bytes': { type: 'string', multiple: true },
  'include-ignored': { type: 'boolean' },
  allow: { type: 'string', multiple: true },
  'read-only': { type: 'boolean' },
  'read-before-write': { type: 'boolean' },
  quiet: { type: 'boolean' },
  progress: { type: 'boolean' },
  'search-timeout': { type: 'string' },
  shell: { type: 'boolean' },
  'shell-host': { type: 'boolean' },
  'shell-sandbox': { type: 'boolean' },
  'patch-out': { type: 'string' },
  'write-back': { type: 'boolean' },
  'allow-write-back': { type: 'boolean' },
  session: { type: 'string' },
  'history-tools': { type: 'boolean' },
} as const;

export interface McpCommand {
  command: 'mcp';
  backend: 'memory' | 'host' | 'overlay';
  /**
   * No `--backend`, `--overlay`, `--root` or `--patch-out` was given: mounts that are all directories without
   * `--max-bytes` are shown in place (the overlay) rather than copied into memory at start.
   */
  lazyMounts?: true;
  root?: string;
  mounts: MountArgument[];
  allow: string[];
  readOnly: boolean;
  readBeforeWrite: boolean;
  quiet: boolean;
  /** `--progress`: progress on stderr even when it is not a terminal. */
  progress?: boolean;
  /** Deadline of one glob or grep call, in milliseconds (the workspace's `limits.searchTimeoutMs`). */
  searchTimeoutMs?: number;
  /** Adds the `bash` tool (`'host'`: real programs in a host workspace's root; `'sandbox'`: in a sandbox). */
  shell?: true | 'host' | 'sandbox';
  /** The `write_back` tool may apply without asking when the client cannot ask the user. */
  allowWriteBack?: boolean;
  /** `--history-tools`: serve `history`, `undo` and `redo`. */
  historyTools?: boolean;
  /** Where to write the session's patch when the server stops. */
  patchOut?: string;
  /** Write the changes back to the mounts when the server stops. */
  writeBack?: boolean;
  /** `--session NAME`: serve this stored session (created when absent) from `store`. */
  session?: string;
  store?: StoreFlags;
}

/** What `mcpCommand` reads: the values of the mcp and store flags, as `parseArgs` gives them. */
type Values = StoreFlagValues & {
  [K in keyof typeof MCP_OPTIONS]?: (typeof MCP_OPTIONS)[K] extends { multiple: true }
    ? string[]
    : (typeof MCP_OPTIONS)[K]['type'] extends 'boolean'
      ? boolean
      : string;
};

/** A `parseArgs` option token: what `mountsInOrder` reads, in order. */
type Token = { kind: 'option'; name: string; value?: string | undefined } | { kind: 'positional' | 'option-terminator' };

const PER_MOUNT = new Set(['include', 'exclude', 'max-bytes']);

/** The `mcp` command from its flags' values and tokens (`--include`, `--exclude` and `--max-bytes` follow their `--mount`). */
export function mcpCommand(values: Values, tokens: readonly Token[]): McpCommand {
  const stored = storedSession(values);
  const root = values.root;
  if (root !== undefined && root.trim() === '') throw new UsageError('--root needs a non-empty path');
  if (root !== undefined && values.backend === 'memory')
    throw new UsageError('--root works on a host directory: it cannot be used with --backend memory');
  if (values.overlay === true && (root !== undefined || values.backend !== undefined))
    throw new UsageError('--overlay shows the mounts in place: it cannot be used with --backend or --root');
  const backend = values.overlay === true ? 'overlay' : (values.backend ?? (root === undefined ? 'memory' : 'host'));
  if (backend !== 'memory' && backend !== 'host' && backend !== 'overlay')
    throw new UsageError(`--backend must be memory or host, got ${JSON.stringify(backend)}`);
  let mounts: MountArgument[];
  let configured: ReturnType<typeof readMountConfig> = { mounts: [], allow: [] };
  try {
    mounts = mountsInOrder(tokens);
    if (values['mount-config'] !== undefined) configured = readMountConfig(values['mount-config']);
  } catch (error) {
    if (error instanceof MountSyntaxError) throw new UsageError(error.message);
    throw error;
  }
  mounts.push(...configured.mounts);
  if (values['include-ignored'] === true) {
    if (mounts.length === 0) throw new UsageError('--include-ignored applies to the mounts: give at least one --mount');
    if (backend === 'overlay') throw new UsageError('--include-ignored: --overlay copies nothing and shows ignored files already');
    for (const mount of mounts) mount.gitignore = false;
  }
  if (stored.session !== undefined && mounts.length > 0) seedFlags(mounts, values);
  if (backend === 'overlay' && mounts.length === 0) throw new UsageError('--overlay shows host directories: give at least one --mount');
  const allow = [...(values.allow ?? []), ...configured.allow];
  if (allow.some((value) => value.trim() === '')) throw new UsageError('--allow needs a non-empty path');
  if (mounts.length > 0 && allow.length === 0) {
    throw new UsageError('--mount needs at least one --allow <root>: the host directories mounts may come from');
  }
  const searchTimeout = values['search-timeout'];
  if (
    searchTimeout !== undefined &&
    (!/^\d+$/.test(searchTimeout) || Number(searchTimeout) < 1 || !Number.isSafeInteger(Number(searchTimeout)))
  )
    throw new UsageError(`--search-timeout must be a positive whole number of milliseconds, got ${JSON.stringify(searchTimeout)}`);
  if (values.shell === true && values['shell-host'] === true) throw new UsageError('--shell and --shell-host exclude each other: pick one');
  if (values['shell-host'] === true && backend !== 'host')
    throw new UsageError('--shell-host runs programs in a host directory: use it with --backend host or --root');
  if (values['shell-sandbox'] === true && (values.shell === true || values['shell-host'] === true))
    throw new UsageError('--shell sandbox, --shell and --shell-host exclude each other: pick one');
  const shell =
    values['shell-host'] === true ? 'host' : values['shell-sandbox'] === true ? 'sandbox' : values.shell === true ? true : undefined;
  if (shell !== undefined && values['read-only'] === true)
    throw new UsageError(
      `--read-only serves no tool that can change files, and ${shell === 'host' ? '--shell-host' : '--shell'}'s bash can: pick one`,
    );
  const patchOut = values['patch-out'];
  if (patchOut !== undefined && patchOut.trim() === '') throw new UsageError('--patch-out needs a non-empty file path');
  const writeBack = values['write-back'] === true;
  if (writeBack && mounts.length === 0)
    throw new UsageError('--write-back writes the changes back to the mounts: give at least one --mount');
  if (writeBack && values['read-only'] === true) throw new UsageError('--write-back with --read-only has nothing to write back');
  const allowWriteBack = values['allow-write-back'] === true;
  if (allowWriteBack && mounts.length === 0)
    throw new UsageError('--allow-write-back lets the write_back tool write to the mounts: give at least one --mount');
  if (allowWriteBack && values['read-only'] === true) throw new UsageError('--allow-write-back with --read-only has nothing to write back');
  if (values.quiet === true && values.progress === true) throw new UsageError('--quiet and --progress contradict each other: pick one');
  // A patch needs the whole start state at exit, which an overlay does not hold once the host changes a file.
  const lazyMounts =
    values.backend === undefined && values.overlay !== true && root === undefined && patchOut === undefined && mounts.length > 0;
  return {
    command: 'mcp',
    backend,
    ...(lazyMounts ? { lazyMounts } : {}),
    ...(root === undefined ? {} : { root }),
    mounts,
    allow,
    readOnly: values['read-only'] === true,
    readBeforeWrite: values['read-before-write'] === true,
    quiet: values.quiet === true,
    ...(values.progress === true ? { progress: true } : {}),
    ...(searchTimeout === undefined ? {} : { searchTimeoutMs: Number(searchTimeout) }),
    ...(shell === undefined ? {} : { shell }),
    ...(patchOut === undefined ? {} : { patchOut }),
    ...(writeBack ? { writeBack } : {}),
    ...(allowWriteBack ? { allowWriteBack } : {}),
    ...stored,
    ...(values['history-tools'] === true ? { historyTools: true } : {}),
  };
}

/**
 * `--session NAME` and the store flags. The stored session is the workspace, so the flags that choose
 * another workspace are refused with it, naming them; `--mount` and `--mount-config` seed a new session
 * (see `seedFlags`). The store flags mean nothing without `--session`.
 */
function storedSession(values: Values): { session?: string; store?: StoreFlags } {
  const storeGiven = Object.keys(STORE_OPTIONS).find((name) => values[name as keyof typeof STORE_OPTIONS] !== undefined);
  if (values.session === undefined) {
    if (storeGiven !== undefined) throw new UsageError(`--${storeGiven} names where --session keeps its session: give --session NAME`);
    return {};
  }
  const workspaceFlags = ['overlay', 'root', 'backend'] as const;
  const clash = workspaceFlags.filter((name) => values[name] !== undefined);
  if (clash.length > 0)
    throw new UsageError(
      `--session serves the workspace kept in the session store: it cannot be used with ${clash.map((name) => `--${name}`).join(', ')}`,
    );
  return { session: sessionName(values.session, '--session'), store: storeFlags(values) };
}

/**
 * `--session NAME --mount …`: the mounts seed the session when it is new (copied into the stored workspace,
 * which holds no mount table), so what needs the mounts to stay mounts is refused: a `:ro` mount (nothing
 * could keep it read-only), `--read-only` (it serves an existing session, which seeds nothing), and writing
 * back at exit or through the tool (`sessionfs sessions write-back NAME --to DIR` does it for a stored session).
 */
function seedFlags(mounts: readonly MountArgument[], values: Values): void {
  const readOnlyMount = mounts.find((mount) => mount.readOnly === true);
  if (readOnlyMount !== undefined)
    throw new UsageError(
      `--session copies the mounts into the stored session: a :ro mount (${JSON.stringify(readOnlyMount.hostPath)}) cannot stay read-only there`,
    );
  const clash = (['read-only', 'write-back', 'allow-write-back'] as const).filter((name) => values[name] === true);
  if (clash.length > 0)
    throw new UsageError(
      `--session with --mount seeds a new stored session: it cannot be used with ${clash.map((name) => `--${name}`).join(', ')}${clash.includes('read-only') ? '' : ' (write a stored session back with sessionfs sessions write-back)'}`,
    );
}

/** `--include`, `--exclude` and `--max-bytes` belong to the `--mount` before them, so the order of the flags matters. */
function mountsInOrder(tokens: readonly Token[]): MountArgument[] {
  const mounts: MountArgument[] = [];
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const value = token.value ?? '';
    if (token.name === 'mount') {
      if (value.trim() === '') throw new UsageError('--mount needs a non-empty path');
      mounts.push(parseMountValue(value));
      continue;
    }
    if (!PER_MOUNT.has(token.name)) continue;
    const mount = mounts.at(-1);
    if (mount === undefined) throw new UsageError(`--${token.name} applies to the --mount before it: put it after a --mount`);
    if (token.name === 'max-bytes') {
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
        throw new UsageError(`--max-bytes must be a whole number of bytes, got ${JSON.stringify(value)}`);
      if (mount.maxBytes !== undefined) throw new UsageError(`--max-bytes is given twice for the mount ${JSON.stringify(mount.hostPath)}`);
      mount.maxBytes = Number(value);
    } else {
      if (value === '') throw new UsageError(`--${token.name} needs a non-empty glob`);
      const key = token.name as 'include' | 'exclude';
      (mount[key] ??= []).push(value);
    }
  }
  return mounts;
}

/** `--shell sandbox` (or `--shell=sandbox`) is the sandbox mode; a bare `--shell` stays the interpreter. */
export function shellModes(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--shell=sandbox' || (arg === '--shell' && argv[i + 1] === 'sandbox')) {
      out.push('--shell-sandbox');
      if (arg === '--shell') i += 1;
    } else out.push(arg);
  }
  return out;
}
