import { closeSync, constants as fsConstants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { AllowedRoots } from '../host-files/allow-list.js';
import { judgeIgnored, parseGitignore, type GitignoreLevel } from '../workspace/search/gitignore.js';

/** A `.gitignore` larger than this is not read (no rules from it): no real one comes near. */
const MAX_GITIGNORE_BYTES = 4 * 1024 * 1024;
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

/**
 * What git would ignore in one host source, asked directory by directory as the hydration walk goes down
 * (so a path's ancestors are always judged first: an ignored directory is never entered). The rules are
 * git's, shared with the searches' `respectGitignore` (`judgeIgnored`): every `.gitignore` counts for its
 * directory and below, the deepest one that speaks wins, `!` re-includes, nothing inside an ignored
 * directory comes back.
 *
 * Which `.gitignore` files count: the source's own and those below it, and, when the source lies inside a
 * git working tree whose top (the directory holding `.git`) is inside the allowed roots, those of the
 * directories from that top down to the source (mounting `repo/packages/web` honours `repo/.gitignore`'s
 * `node_modules/`). A source that those outer rules ignore itself (`repo/build`, mounted on purpose) is
 * judged by its own `.gitignore` files only. Not consulted: `.git/info/exclude`, `core.excludesFile`, and
 * the index (a tracked file matching a pattern is ignored here, where git would still list it).
 *
 * Paths are kept relative to the top of the rules (the working tree's top, or the source itself).
 */
export class SourceGitignore {
  private constructor(
    private readonly levels: readonly GitignoreLevel[],
    /** The source's own directory, relative to the top of the rules ('' when it is the top). */
    private readonly prefix: string,
  ) {}

  /** The rules that apply at the top of the source whose real path is `realRoot`. */
  static forSource(realRoot: string, allowed: AllowedRoots): SourceGitignore {
    const top = workingTreeTop(realRoot, allowed);
    if (top === undefined) return new SourceGitignore([], '');
    const prefix = relative(top, realRoot).split(sep).join('/');
    const levels: GitignoreLevel[] = [];
    const names = prefix.split('/');
    for (let depth = 0; depth < names.length; depth += 1) {
      const directory = names.slice(0, depth).join('/');
      const path = names.slice(0, depth + 1).join('/');
      const rules = readGitignore(join(top, ...names.slice(0, depth)));
      if (rules !== undefined) levels.push({ directory, rules });
      // An outer rule ignores the source or a directory above it: it was mounted on purpose, so only its own rules count.
      if (judgeIgnored(levels, path, true)) return new SourceGitignore([], '');
    }
    return new SourceGitignore(levels, prefix);
  }

  /**
   * The rules inside the directory at `relativeDirectory` (relative to the source; '' is the source): these,
   * plus its own `.gitignore` when `hasGitignore` (a regular file of that name was listed in it).
   */
  enter(realDirectory: string, relativeDirectory: string, hasGitignore: boolean): SourceGitignore {
    if (!hasGitignore) return this;
    const rules = readGitignore(realDirectory);
    if (rules === undefined) return this;
    return new SourceGitignore([...this.levels, { directory: this.#top(relativeDirectory), rules }], this.prefix);
  }

  /**
   * Whether git ignores the entry at `relativePath` (relative to the source), asked of the rules of the
   * directory that lists it (those `enter` returned for it, which hold that directory and its ancestors).
   */
  ignores(relativePath: string, isDirectory: boolean): boolean {
    return this.levels.length > 0 && judgeIgnored(this.levels, this.#top(relativePath), isDirectory);
  }

  #top(relativePath: string): string {
    if (this.prefix === '') return relativePath;
    return relativePath === '' ? this.prefix : `${this.prefix}/${relativePath}`;
  }
}

/**
 * The top of the git working tree holding `realRoot` (the nearest ancestor with a `.git` entry), when it lies
 * inside the allowed roots; undefined when `realRoot` is itself a top, or none is found inside them.
 */
function workingTreeTop(realRoot: string, allowed: AllowedRoots): string | undefined {
  if (hasGitEntry(realRoot)) return undefined;
  for (let directory = dirname(realRoot); allowed.contains(directory); directory = dirname(directory)) {
    if (hasGitEntry(directory)) return directory;
    if (dirname(directory) === directory) break;
  }
  return undefined;
}

function hasGitEntry(directory: string): boolean {
  try {
    lstatSync(join(directory, '.git'));
    return true;
  } catch {
    return false;
  }
}

/** The rules of `directory`'s `.gitignore`: a regular file (a link is not followed, as git does not), else none. */
function readGitignore(directory: string): ReturnType<typeof parseGitignore> {
  let fd: number;
  try {
    fd = openSync(join(directory, '.gitignore'), OPEN_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > MAX_GITIGNORE_BYTES) return undefined;
    const buffer = Buffer.allocUnsafe(info.size);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    return parseGitignore(buffer.subarray(0, length));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
