import type { BufferEncoding, ByteString, CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from 'just-bash';
import { AbortError, ReadOnlyError } from '../workspace/errors.js';
import type { StatResult, Workspace } from '../workspace/types.js';
import { FatalErrors, refusalText, ShellFsError, toShellError } from './fs-errors.js';
import { resolveShellPath, toShellPath, toWorkspacePath } from './shell-path.js';

type EncodingOption = { encoding?: BufferEncoding | null } | BufferEncoding | undefined;

interface DirentEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

/** Device files every script expects; they exist only in the shell, never in the workspace. */
const NULL_DEVICES: ReadonlySet<string> = new Set(['/dev/null', '/dev/zero']);

const EPOCH = new Date(0);

/**
 * just-bash's filesystem interface over any {@link Workspace}: every read and write goes through the
 * protocol, so the workspace's sandbox, limits, policy and snapshots hold for the shell exactly as for the
 * file tools. The workspace root is the shell's `/`; nothing of just-bash's own layout (`/bin`, `/usr`,
 * `/proc`) is created, and `/dev/null` and `/dev/zero` are served here without touching the workspace.
 *
 * What the protocol has no notion of: file modes (`chmod` succeeds on an existing path and keeps nothing,
 * files show as 0644 and directories as 0755), times (`touch` on an existing file leaves it unchanged; both
 * fail with EROFS on a read-only workspace), creating links (`ln` and `ln -s` fail with ENOTSUP), and link
 * targets (`readlink` fails with EPERM; links already in a host workspace are followed while they stay
 * inside it, as the protocol does). A path the policy hides does not exist for `stat` (as for `ls`), so a
 * write to it is refused by the write itself, with the policy's reason.
 */
export class WorkspaceFs implements IFileSystem {
  readonly #workspace: Workspace;
  /** Failures that must fail the whole call (deadline, abort, internal error). */
  readonly fatal = new FatalErrors();
  readonly #changed = new Set<string>();
  /** The refusals (read-only, policy, limit) this shell met, by shell path: see {@link explainRefusals}. */
  readonly refusals = new Map<string, string>();

  readonly #signal: AbortSignal | undefined;
  #lastYield = Date.now();

  /**
   * `signal` stops the shell between two filesystem operations: once it is aborted every operation fails
   * (and is recorded in {@link fatal}), so nothing more reaches the workspace.
   */
  constructor(workspace: Workspace, options: { signal?: AbortSignal } = {}) {
    this.#workspace = workspace;
    this.#signal = options.signal;
  }

  /** Workspace paths (as results show them) this shell wrote, created, deleted or moved, sorted. */
  changed(): string[] {
    return [...this.#changed].sort();
  }

  async readFile(path: string, options?: EncodingOption): Promise<string> {
    const bytes = await this.readFileBuffer(path);
    return Buffer.from(bytes).toString(nodeEncoding(options));
  }

  async readFileBytes(path: string): Promise<ByteString> {
    return Buffer.from(await this.readFileBuffer(path)).toString('latin1') as unknown as ByteString;
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    if (NULL_DEVICES.has(resolveShellPath('/', path))) return new Uint8Array(0);
    return this.#run('open', path, async (at) => (await this.#workspace.readBytes(at)).content);
  }

  async writeFile(path: string, content: FileContent, options?: EncodingOption): Promise<void> {
    await this.#write('open', path, content, options, 'overwrite');
  }

  async appendFile(path: string, content: FileContent, options?: EncodingOption): Promise<void> {
    await this.#write('open', path, content, options, 'append');
  }

  async exists(path: string): Promise<boolean> {
    if (NULL_DEVICES.has(resolveShellPath('/', path))) return true;
    try {
      return await this.#workspace.exists(toWorkspacePath(path));
    } catch (error) {
      // A path the workspace refuses to name (control characters, too deep) does not exist for the shell.
      toShellError(error, 'access', path, this.fatal);
      return false;
    }
  }

  async stat(path: string): Promise<FsStat> {
    const stat = await this.#stat('stat', path);
    return toFsStat(stat, false, resolveShellPath('/', path));
  }

  async lstat(path: string): Promise<FsStat> {
    const stat = await this.#stat('lstat', path);
    return toFsStat(stat, stat.isSymlink, resolveShellPath('/', path));
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    const recursive = options?.recursive ?? false;
    await this.#run('mkdir', path, (at) => this.#workspace.mkdir(at, { parents: recursive, existOk: recursive }), true);
  }

  async readdir(path: string): Promise<string[]> {
    return (await this.readdirWithFileTypes(path)).map((entry) => entry.name);
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    const entries = await this.#run('scandir', path, (at) => this.#workspace.list(at));
    return entries.map((entry) => ({
      name: entry.name,
      isFile: entry.isFile && !entry.isSymlink,
      isDirectory: entry.isDirectory && !entry.isSymlink,
      isSymbolicLink: entry.isSymlink,
    }));
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    if (options?.force === true && !(await this.exists(path))) return;
    await this.#run('rm', path, (at) => this.#workspace.delete(at, { recursive: options?.recursive ?? false }), true);
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    const to = this.#path('cp', dest);
    await this.#run('cp', src, (from) => this.#workspace.copy(from, to, { recursive: options?.recursive ?? false, overwrite: true }));
    this.#changed.add(shown(to));
  }

  async mv(src: string, dest: string): Promise<void> {
    const to = this.#path('rename', dest);
    await this.#run('rename', src, (from) => this.#workspace.rename(from, to, { overwrite: true }), true);
    this.#changed.add(shown(to));
  }

  resolvePath(base: string, path: string): string {
    return resolveShellPath(base, path);
  }

  /** The shell lists directories itself; a whole-tree listing would defeat the workspace's own limits. */
  getAllPaths(): string[] {
    return [];
  }

  async chmod(path: string, _mode: number): Promise<void> {
    await this.#unchanged('chmod', path);
  }

  async utimes(path: string, _atime: Date, _mtime: Date): Promise<void> {
    await this.#unchanged('utime', path);
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw this.#refused(new ShellFsError('ENOTSUP', LINKS_NOT_SUPPORTED, 'symlink', resolveShellPath('/', linkPath)));
  }

  async link(_existingPath: string, newPath: string): Promise<void> {
    throw this.#refused(new ShellFsError('ENOTSUP', LINKS_NOT_SUPPORTED, 'link', resolveShellPath('/', newPath)));
  }

  async readlink(path: string): Promise<string> {
    const stat = await this.#stat('readlink', path);
    if (!stat.isSymlink) throw new ShellFsError('EINVAL', 'invalid argument', 'readlink', path);
    throw new ShellFsError('EPERM', 'operation not permitted (link targets are not shown)', 'readlink', path);
  }

  /** Links inside a workspace are resolved by the workspace itself, so a path that exists is its own real path. */
  async realpath(path: string): Promise<string> {
    await this.#stat('realpath', path);
    return resolveShellPath('/', path);
  }

  async #write(syscall: string, path: string, content: FileContent, options: EncodingOption, mode: 'overwrite' | 'append') {
    if (NULL_DEVICES.has(resolveShellPath('/', path))) return;
    const bytes = typeof content === 'string' ? Buffer.from(content, nodeEncoding(options)) : content;
    await this.#run(syscall, path, (at) => this.#workspace.writeBytes(at, bytes, { mode, createParents: false }), true);
  }

  async #stat(syscall: string, path: string): Promise<StatResult> {
    if (NULL_DEVICES.has(resolveShellPath('/', path))) {
      return { path, isFile: true, isDirectory: false, isSymlink: false, executable: false, sizeBytes: 0 };
    }
    try {
      return await this.#run(syscall, path, (at) => this.#workspace.stat(at));
    } catch (error) {
      // just-bash's mv and cp stat the target first and give up ("cannot safely determine whether …") on
      // any error but ENOENT: a path the policy hides is absent here, and the write to it says why not.
      if (error instanceof ShellFsError && error.code === 'EPERM') {
        this.refusals.delete(resolveShellPath('/', path));
        throw new ShellFsError('ENOENT', 'no such file or directory', syscall, resolveShellPath('/', path));
      }
      throw error;
    }
  }

  /** chmod and touch keep nothing, but a real system refuses them on a read-only file system. */
  async #unchanged(syscall: string, path: string): Promise<void> {
    await this.#stat(syscall, path);
    if (this.#workspace.readOnly) {
      throw this.#refused(toShellError(new ReadOnlyError(toWorkspacePath(path) || '/'), syscall, resolveShellPath('/', path), this.fatal));
    }
  }

  #refused(error: ShellFsError): ShellFsError {
    const text = refusalText(error);
    if (text !== undefined) this.refusals.set(error.path, text);
    return error;
  }

  #path(syscall: string, path: string): string {
    const at = toWorkspacePath(path);
    if (at.startsWith('dev/') && NULL_DEVICES.has(`/${at}`)) {
      throw new ShellFsError('EPERM', 'operation not permitted (a device of the shell)', syscall, path);
    }
    return at;
  }

  /** Runs one protocol call on `path`, rewriting its errors for the shell and noting a change on success. */
  async #run<T>(syscall: string, path: string, call: (at: string) => Promise<T>, changes = false): Promise<T> {
    const at = this.#path(syscall, path);
    try {
      await this.#checkpoint();
      const result = await call(at);
      if (changes) this.#changed.add(shown(at));
      return result;
    } catch (error) {
      throw this.#refused(toShellError(error, syscall, resolveShellPath('/', path), this.fatal));
    }
  }

  /**
   * A loop over a fast backend settles every operation as a microtask, which starves timers: now and then
   * let the event loop turn so a deadline or an abort can fire, then refuse to go on once it has.
   */
  async #checkpoint(): Promise<void> {
    if (Date.now() - this.#lastYield >= YIELD_EVERY_MS) {
      await new Promise((resolveYield) => turnEventLoop(resolveYield));
      this.#lastYield = Date.now();
    }
    if (this.#signal?.aborted === true) throw new AbortError('the command was stopped');
  }
}

const YIELD_EVERY_MS = 10;
const LINKS_NOT_SUPPORTED = 'Operation not supported (symbolic and hard links are not supported on this workspace yet)';
/**
 * Taken when this module loads: while a script runs, just-bash's defense-in-depth replaces the timer
 * globals to keep guest code from scheduling work; this adapter is host code and needs the real one.
 */
const turnEventLoop = globalThis.setImmediate;

function shown(workspacePath: string): string {
  return toShellPath(workspacePath).replace(/^\/(?=.)/, '');
}

/**
 * `identity` is the path, as {@link WorkspaceFs.realpath} is: the shell creates no links, so two paths are
 * one file only when they are one path. Without it just-bash's `mv` and `cp` refuse to replace an existing
 * file ("cannot safely determine whether ... are the same file"), the `sort f > t && mv t f` idiom included.
 */
function toFsStat(stat: StatResult, asLink: boolean, identity: string): FsStat {
  return {
    identity,
    isFile: stat.isFile && !asLink,
    isDirectory: stat.isDirectory && !asLink,
    isSymbolicLink: asLink,
    mode: asLink ? 0o120777 : stat.isDirectory ? 0o40755 : 0o100644,
    size: stat.sizeBytes,
    mtime: stat.modifiedAt ?? EPOCH,
  };
}

function nodeEncoding(options: EncodingOption): globalThis.BufferEncoding {
  const encoding = typeof options === 'string' ? options : options?.encoding;
  if (encoding === undefined || encoding === null || encoding === 'utf-8') return 'utf8';
  return encoding === 'binary' ? 'latin1' : encoding;
}
