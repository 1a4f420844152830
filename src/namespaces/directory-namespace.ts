import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { hostDriver } from '../backends/host/index.js';
import { removeAt } from '../host-files/remove-at.js';
import { pinDirectory, Sandbox } from '../host-files/sandbox.js';
import { parseSnapshotRecord } from '../snapshots/record.js';
import { createWorkspace, type CreateWorkspaceOptions, type ManagedWorkspace } from '../workspace/create-workspace.js';
import { driverWith } from '../workspace/driver-proxy.js';
import type { BackendDriver, Snapshotter } from '../workspace/driver.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import type { SnapshotOptions, WorkspaceSnapshot } from '../workspace/types.js';

export interface DirectoryNamespaceOptions {
  /** Where every user's workspace lives (created if missing). Nothing is ever created outside it. */
  dir: string;
  /**
   * Options for every user's workspace: `createWorkspace`'s (limits, policy, audit, protect, readOnly) and
   * the host driver's `exclude`. Root, git dir and change detection are the namespace's.
   */
  workspace?: Pick<CreateWorkspaceOptions, 'readOnly' | 'limits' | 'policy' | 'audit' | 'protect'> & { exclude?: readonly string[] };
}

const USERS = 'users';
const SNAPSHOTTER_METHODS = ['snapshot', 'restore', 'restoreExcept', 'diff', 'open', 'changed', 'release', 'dispose'] as const;
const ID_FILE = 'id.json';
const HISTORY_FILE = 'snapshots.jsonl';

/**
 * Per-user persistent workspaces under one directory (`new WorkspaceNamespace({ dir })`). `open(userId)` returns that user's host workspace:
 * its files in `<dir>/users/<name>/root`, its snapshots as git commits in `<dir>/users/<name>/git`, and
 * every snapshot record it takes appended to a history file (`history(userId)`), so files, snapshots and history survive a
 * restart. Any string is a valid id (`''`, NUL, `../x`, `a/b`, 10 KB): the directory name is the id's
 * sha256, never the id, and the id itself is kept (JSON) beside it for `list()`. Each user's workspace is
 * sandboxed to its own root, so no path or link reaches another user's files.
 */
export class DirectoryNamespace {
  readonly kind = 'directory';
  /** The namespace directory's real path (never show it to a model). */
  readonly dir: string;
  readonly #users: string;
  readonly #options: DirectoryNamespaceOptions['workspace'];

  constructor(options: DirectoryNamespaceOptions) {
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
    if (typeof options.dir !== 'string' || options.dir === '' || options.dir.includes('\0'))
      throw new InvalidArgumentError('dir must be a non-empty host path');
    const workspace = options.workspace as Record<string, unknown> | undefined;
    for (const key of ['root', 'gitDir', 'changeDetection']) {
      if (workspace?.[key] !== undefined) throw new InvalidArgumentError(`workspace.${key} is the namespace's to choose`);
    }
    try {
      fs.mkdirSync(join(resolve(options.dir), USERS), { recursive: true });
      this.dir = fs.realpathSync.native(resolve(options.dir));
    } catch {
      throw new InvalidArgumentError('cannot create or open the namespace directory');
    }
    this.#users = join(this.dir, USERS);
    this.#options = options.workspace;
  }

  /** The user's workspace, created empty on first use. The caller disposes it (its files stay). */
  open(userId: string): ManagedWorkspace {
    const home = this.#home(userId);
    if (!fs.existsSync(home)) this.#create(userId, home);
    const { exclude, ...options } = this.#options ?? {};
    const driver = hostDriver({
      root: join(home, 'root'),
      gitDir: join(home, 'git'),
      changeDetection: 'scan',
      ...(exclude === undefined ? {} : { exclude }),
    });
    return createWorkspace(withHistory(driver, join(home, HISTORY_FILE)), options);
  }

  /** Every snapshot record the user's workspace has taken, oldest first, across restarts (`[]` for an unknown user). */
  async history(userId: string): Promise<WorkspaceSnapshot[]> {
    let text: string;
    try {
      text = await fs.promises.readFile(join(this.#home(userId), HISTORY_FILE), 'utf8');
    } catch {
      return [];
    }
    const records: WorkspaceSnapshot[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        records.push(parseSnapshotRecord(JSON.parse(line)));
      } catch {
        // a torn last line (the process died while appending): skipped
      }
    }
    return records;
  }

  /** Whether the user has a workspace. */
  has(userId: string): boolean {
    return fs.existsSync(this.#home(userId));
  }

  /** Every user id with a workspace, exactly as given to `open`, sorted. */
  list(): string[] {
    const ids: string[] = [];
    for (const name of fs.readdirSync(this.#users)) {
      if (!/^[0-9a-f]{64}$/.test(name)) continue; // half-made homes and anything not ours
      try {
        const id: unknown = JSON.parse(fs.readFileSync(join(this.#users, name, ID_FILE), 'utf8'));
        if (typeof id === 'string' && homeName(id) === name) ids.push(id);
      } catch {
        // unreadable: not listed
      }
    }
    return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Removes the user's workspace (files, snapshots, history); `false` when there was none. Never follows a link. */
  delete(userId: string): boolean {
    const name = homeName(checkedId(userId));
    if (!fs.existsSync(join(this.#users, name))) return false;
    const parent = pinDirectory(new Sandbox(this.#users), '', '/');
    try {
      // Renamed away first, so the id is gone at once and a concurrent `open` starts a fresh home.
      const doomed = `${name}.deleted-${randomBytes(8).toString('hex')}`;
      fs.renameSync(parent.at(name), parent.at(doomed));
      removeAt(parent, doomed, '/');
    } finally {
      parent.release();
    }
    return true;
  }

  #home(userId: string): string {
    return join(this.#users, homeName(checkedId(userId)));
  }

  /** Makes a home in a temp directory and renames it into place, so a home is either whole or absent. */
  #create(userId: string, home: string): void {
    const temp = `${home}.new-${randomBytes(8).toString('hex')}`;
    fs.mkdirSync(join(temp, 'root'), { recursive: true });
    fs.mkdirSync(join(temp, 'git'));
    fs.writeFileSync(join(temp, ID_FILE), JSON.stringify(userId));
    try {
      fs.renameSync(temp, home);
    } catch (error) {
      fs.rmSync(temp, { recursive: true, force: true });
      // Another open made it meanwhile: use theirs.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
    }
  }
}

/** The driver with every snapshot record it takes also appended to `file`, so the user's history survives a restart. */
function withHistory(driver: BackendDriver, file: string): BackendDriver {
  const snapshots = driver.snapshots as Snapshotter;
  const recorded: Record<string, unknown> = {};
  for (const name of SNAPSHOTTER_METHODS) {
    const method = snapshots[name];
    if (typeof method === 'function') recorded[name] = method.bind(snapshots);
  }
  recorded.snapshot = async (options: SnapshotOptions): Promise<WorkspaceSnapshot> => {
    const record = await snapshots.snapshot(options);
    await fs.promises.appendFile(file, `${JSON.stringify(record)}\n`);
    return record;
  };
  return driverWith(driver, { snapshots: recorded });
}

function checkedId(userId: unknown): string {
  if (typeof userId !== 'string') throw new InvalidArgumentError('a user id must be a string');
  return userId;
}

/** The home directory's name: the id's sha256 (UTF-16 code units, so every string, lone surrogates included, is distinct). */
function homeName(userId: string): string {
  return createHash('sha256').update(Buffer.from(userId, 'utf16le')).digest('hex');
}
