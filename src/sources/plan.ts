import { lstatSync, readdirSync, realpathSync, statSync, type Dirent, type Stats } from 'node:fs';
import { basename } from 'node:path';
import picomatch from 'picomatch';
import { compare, sortedForWalk } from './copy-order.js';
import { linkInSource } from './source-links.js';
import {
  FileNotFoundError,
  InvalidArgumentError,
  IsADirectoryError,
  LimitExceededError,
  NotADirectoryError,
  PathEscapeError,
} from '../workspace/errors.js';
import {
  assertCreatable,
  displayPath,
  fitsLimits,
  isChildOf,
  isExpressibleName,
  joinPath,
  normalizePath,
  parentPath,
  printable,
  splitPath,
  type NormalizedPath,
} from '../workspace/paths.js';
import type { SkippedPath, Workspace } from '../workspace/types.js';
import type { AllowedRoots } from '../host-files/allow-list.js';
import { defaultSourcePath } from './source-path.js';
import type { HostSourceSchema } from './schema.js';
import { Pacer, SPECIAL, UNREADABLE } from './source.js';
import { isVersionControl } from '../workspace/version-control.js';
import { SourceGitignore } from './gitignore.js';

// Hydration, step 1: every source resolved, checked against the allow-list and walked into one plan.

export interface PlannedFile {
  kind: 'file';
  /** The real host path to open (for a followed link, its resolved target). */
  real: string;
  /** Which source it comes from (its index). */
  sourceIndex: number;
}

interface PlannedDirectory {
  kind: 'directory';
  sourceIndex: number;
}

/** A link whose target stays inside its source: copied as a link, its target text as the host stores it. */
export interface PlannedLink {
  kind: 'symlink';
  target: string;
  sourceIndex: number;
}

type Planned = PlannedFile | PlannedDirectory | PlannedLink;

interface SourceContext {
  index: number;
  /** The source's real directory: a link whose target stays inside it is copied as a link. */
  root: string;
  path: NormalizedPath;
  followSymlinks: boolean;
  includeGit: boolean;
  isIncluded: ((relative: string) => boolean) | undefined;
  isExcluded: (relative: string) => boolean;
  maxBytes: number | undefined;
  /** Bytes planned so far (counted only when there is a budget). */
  bytes: number;
}

/** A directory being walked: its paths relative to the source and in the workspace, and its children's prefixes. */
interface WalkedDirectory {
  relative: string;
  workspace: NormalizedPath;
  realPrefix: string;
  relativePrefix: string;
  workspacePrefix: string;
}

export type ParsedSource = ReturnType<typeof HostSourceSchema.parse>;

export const SKIP = {
  symlink: 'symlink leaving its source (not followed: set followSymlinks to follow links inside the allowed roots)',
  noLinks: 'symlink (this workspace keeps no symlinks)',
  brokenSymlink: 'broken symlink',
  outside: 'symlink target outside the allowed roots',
  cycle: 'symlink cycle',
  invalidName: 'name cannot be a workspace path (control character, backslash, or bytes that are not UTF-8)',
  limits: 'path over the workspace limits (depth or segment length)',
  special: SPECIAL,
  unreadable: UNREADABLE,
  versionControl: "version-control directory (a source's includeGit: 'read-only' brings it in read-only)",
  gitFile: 'a version-control pointer file (a .git file names a repository outside the source)',
  ignored: "ignored by .gitignore (a source's gitignore: false, or --include-ignored, brings it in)",
  denied: 'denied by the workspace policy',
} as const;

export class Planner {
  readonly entries = new Map<NormalizedPath, Planned>();
  readonly skipped: SkippedPath[] = [];
  readonly budgets: (number | undefined)[] = [];
  /** Version-control directories brought in with `includeGit: 'read-only'`: protected once written. */
  readonly hostRoots = new Set<NormalizedPath>();
  readonly #sourcePaths: NormalizedPath[] = [];
  /**
   * Every file planned, in the order it was planned, `onFile` told of each: so reading can start while the
   * walk goes on. A replaced file stays listed (so that a caller can see the list is not the plan's).
   */
  readonly walked: PlannedFile[] = [];

  constructor(
    private readonly workspace: Workspace,
    private readonly allowed: AllowedRoots,
    private readonly signal: AbortSignal | undefined,
    private readonly onFile: (file: PlannedFile) => void = () => undefined,
  ) {}

  describe(index: number): string {
    return `source ${index} (at ${displayPath(this.#sourcePaths[index] ?? '')})`;
  }

  async addSource(index: number, source: ParsedSource): Promise<void> {
    const path = normalizePath(source.path ?? defaultSourcePath(source.hostPath));
    this.#sourcePaths[index] = path;
    this.budgets[index] = source.maxBytes;
    if (path !== '') assertCreatable(path, this.workspace.limits);
    const label = this.describe(index);
    const followSymlinks = source.followSymlinks === true;

    let link: boolean;
    try {
      link = lstatSync(source.hostPath).isSymbolicLink();
    } catch {
      throw new FileNotFoundError(displayPath(path), `${label}: the host path does not exist or cannot be read`);
    }
    if (link && !followSymlinks) {
      // The link itself lies somewhere; nothing is read through it.
      this.skipped.push({ path: displayPath(path), reason: `host path is a ${SKIP.symlink}` });
      return;
    }
    let real: string;
    try {
      real = realpathSync.native(source.hostPath);
    } catch {
      throw new FileNotFoundError(displayPath(path), `${label}: the host path ${link ? 'is a broken symlink' : 'cannot be resolved'}`);
    }
    if (!this.allowed.contains(real)) {
      throw new PathEscapeError(displayPath(path), `${label}: the host path lies outside the allowed host roots`);
    }
    const info = statOrUndefined(real);
    const context: SourceContext = {
      index,
      root: real,
      path,
      followSymlinks,
      includeGit: source.includeGit === 'read-only',
      isIncluded: source.include === undefined ? undefined : picomatch(source.include, { dot: true }),
      isExcluded: source.exclude === undefined || source.exclude.length === 0 ? () => false : picomatch(source.exclude, { dot: true }),
      maxBytes: source.maxBytes,
      bytes: 0,
    };
    if (info?.isFile()) {
      if (path === '') throw new InvalidArgumentError(`${label}: a single-file source needs a path other than the root`);
      const name = basename(real);
      if (context.isExcluded(name) || (context.isIncluded !== undefined && !context.isIncluded(name))) return;
      this.#budget(context, info.size, path);
      this.#add(path, { kind: 'file', real, sourceIndex: index });
      return;
    }
    if (!info?.isDirectory()) {
      throw new InvalidArgumentError(`${label}: the host path is not a regular file or directory`, displayPath(path));
    }
    if (isVersionControl(basename(real))) {
      if (!context.includeGit) {
        this.skipped.push({ path: displayPath(path), reason: SKIP.versionControl });
        return;
      }
      this.hostRoots.add(path);
    }
    if (path !== '') this.#add(path, { kind: 'directory', sourceIndex: index });
    const gitignore = source.gitignore === false ? undefined : SourceGitignore.forSource(real, this.allowed);
    await this.#walk(context, real, '', new Set([real]), new Pacer(), gitignore);
  }

  /** Walks one real directory; `relative` is its path relative to the source; `gitignore`: the rules above it. */
  async #walk(
    context: SourceContext,
    realDirectory: string,
    relative: string,
    ancestors: Set<string>,
    pacer: Pacer,
    gitignore: SourceGitignore | undefined,
  ): Promise<void> {
    this.signal?.throwIfAborted();
    await pacer.maybeYield();
    const workspaceDirectory = relative === '' ? context.path : joinPath(context.path, relative);
    let children: Dirent[];
    try {
      children = sortedForWalk(readdirSync(realDirectory, { withFileTypes: true }));
    } catch {
      this.skipped.push({ path: displayPath(workspaceDirectory), reason: `${SKIP.unreadable} directory` });
      return;
    }
    const rules = gitignore?.enter(
      realDirectory,
      relative,
      children.some((child) => child.name === '.gitignore' && child.isFile()),
    );

    // Whether this directory is planned itself (an `include` may leave it out): then its entries' parents are.
    const planned = this.entries.get(workspaceDirectory)?.kind === 'directory';
    const item = this.#item;
    // Each child's paths are a prefix and its name: the prefixes built once for the directory, not per child.
    const directory: WalkedDirectory = {
      relative,
      workspace: workspaceDirectory,
      realPrefix: realDirectory === '/' ? '/' : `${realDirectory}/`,
      relativePrefix: relative === '' ? '' : `${relative}/`,
      workspacePrefix: workspaceDirectory === '' ? '' : `${workspaceDirectory}/`,
    };
    // Indexed: a loop of tens of thousands of entries, no iterator result per entry.
    for (let index = 0; index < children.length; index += 1) {
      const kind = this.#classify(context, directory, children[index] as Dirent, ancestors, rules);
      if (kind === undefined) continue;
      if (kind === 'skip') {
        this.skipped.push({ path: item.path, reason: item.reason });
        continue;
      }
      const workspacePath = item.path;
      if (kind === 'file') {
        this.#budget(context, item.size, workspacePath);
        this.#add(workspacePath, { kind: 'file', real: item.real, sourceIndex: context.index }, planned);
        continue;
      }
      if (kind === 'symlink') {
        this.#add(workspacePath, { kind: 'symlink', target: item.target, sourceIndex: context.index }, planned);
        continue;
      }
      // The scratch is overwritten below: what the nested walk needs is taken out first.
      const nestedReal = item.real;
      const nestedRelative = item.relative;
      if (context.isIncluded === undefined || context.isIncluded(nestedRelative)) {
        this.#add(workspacePath, { kind: 'directory', sourceIndex: context.index }, planned);
      }
      const nested = new Set(ancestors).add(nestedReal);
      await this.#walk(context, nestedReal, nestedRelative, nested, pacer, rules);
    }
  }

  /**
   * What `#classify` found about the child it was given, read right after it returns: one object for the
   * whole walk rather than one per entry (a large tree has tens of thousands).
   */
  readonly #item = { path: '' as NormalizedPath, relative: '', real: '', size: 0, target: '', reason: '' };

  #skip(path: NormalizedPath, reason: string): 'skip' {
    this.#item.path = path;
    this.#item.reason = reason;
    return 'skip';
  }

  #classify(
    context: SourceContext,
    directory: WalkedDirectory,
    child: Dirent,
    ancestors: Set<string>,
    gitignore: SourceGitignore | undefined,
  ): 'skip' | 'file' | 'symlink' | 'directory' | undefined {
    const item = this.#item;
    const name = child.name;
    const relative = directory.relative;
    if (!isExpressibleName(name)) return this.#skip(joinPath(directory.workspace, printable(name)), SKIP.invalidName);
    const childRelative = directory.relativePrefix + name;
    if (context.isExcluded(childRelative)) return undefined;
    const workspacePath: NormalizedPath = directory.workspacePrefix + name;
    // As git sees it: a link is not a directory, whatever it points to. An ignored directory is one entry.
    if (gitignore?.ignores(childRelative, child.isDirectory()) === true) {
      if (!child.isDirectory() && context.isIncluded !== undefined && !context.isIncluded(childRelative)) return undefined;
      return this.#skip(workspacePath, SKIP.ignored);
    }
    // A name from readdir holds no separator and is never `.` or `..`: no normalising join needed.
    const hostPath = directory.realPrefix + name;

    let real = hostPath;
    let isDirectory = child.isDirectory();
    let isFile = child.isFile();
    let size: number | undefined;
    if (child.isSymbolicLink()) {
      const inSource = linkInSource(context.root, relative, hostPath);
      if (inSource !== undefined) {
        if (isVersionControl(name)) return this.#skip(workspacePath, SKIP.versionControl);
        if (context.isIncluded !== undefined && !context.isIncluded(childRelative)) return undefined;
        if (!fitsLimits(workspacePath, this.workspace.limits)) return this.#skip(workspacePath, SKIP.limits);
        item.path = workspacePath;
        item.target = inSource;
        return 'symlink';
      }
      if (!context.followSymlinks) return this.#skip(workspacePath, SKIP.symlink);
      try {
        real = realpathSync.native(hostPath);
      } catch {
        return this.#skip(workspacePath, SKIP.brokenSymlink);
      }
      if (!this.allowed.contains(real)) return this.#skip(workspacePath, SKIP.outside);
      const target = statOrUndefined(real);
      if (target === undefined) return this.#skip(workspacePath, SKIP.brokenSymlink);
      isDirectory = target.isDirectory();
      isFile = target.isFile();
      size = target.size;
      if (isDirectory && ancestors.has(real)) return this.#skip(workspacePath, SKIP.cycle);
    } else if (!isFile && !isDirectory) {
      return this.#skip(workspacePath, SKIP.special);
    }
    if (isVersionControl(name)) {
      if (!isDirectory) return this.#skip(workspacePath, isFile ? SKIP.gitFile : SKIP.versionControl);
      if (!context.includeGit) return this.#skip(workspacePath, SKIP.versionControl);
      this.hostRoots.add(workspacePath);
    }
    if (isDirectory) {
      if (!fitsLimits(workspacePath, this.workspace.limits)) return this.#skip(workspacePath, SKIP.limits);
      item.path = workspacePath;
      item.relative = childRelative;
      item.real = real;
      return 'directory';
    }
    if (!isFile) return this.#skip(workspacePath, SKIP.special);
    if (context.isIncluded !== undefined && !context.isIncluded(childRelative)) return undefined;
    if (!fitsLimits(workspacePath, this.workspace.limits)) return this.#skip(workspacePath, SKIP.limits);
    if (size === undefined && context.maxBytes !== undefined) {
      // Sizes are only needed up front for a budget; otherwise the copy learns them from the open file.
      try {
        size = lstatSync(hostPath).size;
      } catch {
        return this.#skip(workspacePath, SKIP.unreadable);
      }
    }
    item.path = workspacePath;
    item.real = real;
    item.size = size ?? 0;
    return 'file';
  }

  #budget(context: SourceContext, size: number, path: NormalizedPath): void {
    if (context.maxBytes === undefined) return;
    context.bytes += size;
    if (context.bytes > context.maxBytes) {
      throw new LimitExceededError(
        `hydration refused: ${this.describe(context.index)} needs more than its maxBytes of ${context.maxBytes} bytes (reached at ${displayPath(path)}); nothing was written`,
        displayPath(path),
      );
    }
  }

  /**
   * Records a planned entry (a link as a file); implicit parents become directories; a file/directory clash
   * fails. `parentPlanned`: the caller knows the parent is a planned directory (the walk adding its entries).
   */
  #add(path: NormalizedPath, entry: Planned, parentPlanned = false): void {
    // Siblings come one after another: when the parent is already a planned directory, so are its parents.
    const parentOfPath = parentPlanned ? '' : parentPath(path);
    const segments = parentOfPath === '' || this.entries.get(parentOfPath)?.kind === 'directory' ? [] : splitPath(path);
    let parent = '';
    for (let i = 0; i < segments.length - 1; i += 1) {
      parent = joinPath(parent, segments[i] as string);
      const existing = this.entries.get(parent);
      if (existing === undefined) this.entries.set(parent, { kind: 'directory', sourceIndex: entry.sourceIndex });
      else if (existing.kind !== 'directory') this.#clash(parent, existing.sourceIndex, entry.sourceIndex, 'file');
    }
    const existing = this.entries.get(path);
    if (existing !== undefined) {
      if (existing.kind === 'directory' && entry.kind !== 'directory')
        this.#clash(path, existing.sourceIndex, entry.sourceIndex, 'directory');
      if (existing.kind !== 'directory' && entry.kind === 'directory') this.#clash(path, existing.sourceIndex, entry.sourceIndex, 'file');
      if (existing.kind === 'directory') return;
    }
    // A later source's file replaces an earlier one's.
    this.entries.set(path, entry);
    if (entry.kind === 'file') {
      this.walked.push(entry);
      this.onFile(entry);
    }
  }

  #clash(path: NormalizedPath, earlier: number, later: number, earlierKind: 'file' | 'directory'): never {
    const who = earlier === later ? this.describe(later) : `${this.describe(later)} and ${this.describe(earlier)}`;
    const message = `hydration refused: ${who} clash at ${displayPath(path)}: one has a ${earlierKind === 'file' ? 'file' : 'directory'}, the other a ${earlierKind === 'file' ? 'directory' : 'file'}; nothing was written`;
    if (earlierKind === 'file') throw new NotADirectoryError(displayPath(path), message);
    throw new IsADirectoryError(displayPath(path), message);
  }

  /** Planned directories with nothing planned below them (the others are created by the writes). */
  leafDirectories(): NormalizedPath[] {
    const parents = new Set<NormalizedPath>();
    // Entries come in walk order, a directory's together: its path is cut out once for them.
    let parent: NormalizedPath | undefined;
    this.entries.forEach((_entry, path) => {
      if (parent !== undefined && isChildOf(path, parent)) return;
      parent = parentPath(path);
      parents.add(parent);
    });
    const leaves: NormalizedPath[] = [];
    this.entries.forEach((entry, path) => {
      if (entry.kind === 'directory' && !parents.has(path)) leaves.push(path);
    });
    return leaves.sort(compare);
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
