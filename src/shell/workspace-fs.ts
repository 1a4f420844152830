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
 * File kinds are the protocol's: `chmod` sets or clears the executable bit (the owner's x bit decides, as
 * git records it; the other bits are not kept: files show as 0755 or 0644, directories as 0755), `ln -s`
 * makes a link (an absolute target, which in this shell names a workspace path, is stored relative to the
 * link so that it resolves the same in the workspace, an export or a sandbox), `readlink` shows the target,
 * and `cp` without `-r` copies what a link points to while `cp -r` copies links as links (as GNU cp does).
 * On a backend without kinds these fail with ENOTSUP. Hard links (`ln` without `-s`) fail with ENOTSUP.
 * Times are not kept (`touch` on an existing file leaves it unchanged; it fails with EROFS on a read-only
 * workspace). A path the policy hides does not exist for `stat` (as for `ls`), so a write to it is refused
 * by the write itself, with the policy's reason.
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
    const recursive = options?.recursive ?? false;
    const source = recursive ? undefined : await this.#stat('cp', src);
    if (source?.isSymlink === true && source.isFile) {
      // `cp link copy` copies what the link points to (GNU cp dereferences without -r), with its executable bit.
      const { content } = await this.#run('cp', src, (from) => this.#workspace.readBytes(from));
      const executable = source.executable ? { executable: true } : {};
      await this.#run('cp', dest, (at) => this.#workspace.writeBytes(at, content, { createParents: false, ...executable }), true);
      return;
    }
    await this.#run('cp', src, (from) => this.#workspace.copy(from, to, { recursive, overwrite: true }));
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

  /** The owner's execute bit of a file is kept (git's 100755); every other bit, and a directory's mode, is not. */
  async chmod(path: string, mode: number): Promise<void> {
    const stat = await this.#stat('chmod', path);
    const executable = (mode & 0o100) !== 0;
    if (!stat.isFile || stat.executable === executable) return this.#unchanged('chmod', path);
    await this.#run('chmod', path, (at) => this.#workspace.setExecutable(at, executable), true);
  }

  async utimes(path: string, _atime: Date, _mtime: Date): Promise<void> {
    await this.#unchanged('utime', path);
  }

  async symlink(target: string, linkPath: string): Promise<void> {
    const stored = target.startsWith('/') ? relativeTarget(resolveShellPath('/', linkPath), resolveShellPath('/', target)) : target;
    await this.#run('symlink', linkPath, (at) => this.#workspace.symlink(stored, at), true);
  }

  async link(_existingPath: string, newPath: string): Promise<void> {
    throw this.#refused(new ShellFsError('ENOTSUP', LINKS_NOT_SUPPORTED, 'link', resolveShellPath('/', newPath)));
  }

  async readlink(path: string): Promise<string> {
    return this.#run('readlink', path, (at) => this.#workspace.readlink(at));
  }

  /** The path with every link on it followed (inside the workspace: the workspace refuses one leading out). */
  async realpath(path: string): Promise<string> {
    const pending = resolveShellPath('/', path)
      .split('/')
      .filter((name) => name !== '');
    const done: string[] = [];
    for (let hops = 0; pending.length > 0;) {
      const name = pending.shift() as string;
      if (name === '.') continue;
      if (name === '..') {
        done.pop();
        continue;
      }
      const here = `/${[...done, name].join('/')}`;
      const stat = await this.#stat('realpath', here);
      if (!stat.isSymlink || stat.linkTarget === undefined) {
        done.push(name);
        continue;
      }
      if ((hops += 1) > 40) throw new ShellFsError('ELOOP', 'Too many levels of symbolic links', 'realpath', resolveShellPath('/', path));
      if (stat.linkTarget.startsWith('/')) done.length = 0;
      pending.unshift(...stat.linkTarget.split('/').filter((part) => part !== ''));
    }
    return `/${done.join('/')}`;
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
const LINKS_NOT_SUPPORTED = 'Operation not supported (hard links are not supported on a workspace; use ln -s)';

/** `to` (an absolute shell path) as a link at `link` would name it relatively: `/a/b` from `/c/l` is `../a/b`. */
function relativeTarget(link: string, to: string): string {
  const from = link
    .split('/')
    .filter((name) => name !== '')
    .slice(0, -1);
  const target = to.split('/').filter((name) => name !== '');
  let common = 0;
  while (common < from.length && common < target.length && from[common] === target[common]) common += 1;
  const up = from.length - common;
  const rest = target.slice(common);
  return [...Array<string>(up).fill('..'), ...rest].join('/') || '.';
}
/**
 * Taken when this module loads: while a script runs, just-bash's defense-in-depth replaces the timer
 * globals to keep guest code from scheduling work; this adapter is host code and needs the real one.
 */
const turnEventLoop = globalThis.setImmediate;

function shown(workspacePath: string): string {
  return toShellPath(workspacePath).replace(/^\/(?=.)/, '');
}

/**
 * `identity` is the path as given: without one just-bash's `mv` and `cp` refuse to replace an existing file
 * ("cannot safely determine whether ... are the same file"), the `sort f > t && mv t f` idiom included. A
 * link and its target therefore count as two files there (`cp link target` copies onto the target).
 */
function toFsStat(stat: StatResult, asLink: boolean, identity: string): FsStat {
  return {
    identity,
    isFile: stat.isFile && !asLink,
    isDirectory: stat.isDirectory && !asLink,
    isSymbolicLink: asLink,
    // Permission bits only, as just-bash's own file systems keep them (its `stat -c %a` prints them as they are).
    mode: asLink ? 0o777 : stat.isDirectory || stat.executable ? 0o755 : 0o644,
    size: stat.sizeBytes,
    mtime: stat.modifiedAt ?? EPOCH,
  };
}

function nodeEncoding(options: EncodingOption): globalThis.BufferEncoding {
  const encoding = typeof options === 'string' ? options : options?.encoding;
  if (encoding === undefined || encoding === null || encoding === 'utf-8') return 'utf8';
  return encoding === 'binary' ? 'latin1' : encoding;
}
