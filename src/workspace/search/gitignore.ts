import ignore, { type Ignore } from 'ignore';
import { decodeText } from '../../text/encoding.js';
import { FileNotFoundError, IsADirectoryError, NotADirectoryError, PathEscapeError, PolicyError } from '../errors.js';
import type { SearchEntry, SearchSource } from './source.js';
import { baseName, joinPath, parentPath, relativeTo, type NormalizedPath } from '../paths.js';
import type { SearchDeadline } from './deadline.js';

/** What a gitignore-aware search kept, and how many of the files it found were ignored. */
export interface GitignoreSelection {
  kept: SearchEntry[];
  ignored: number;
}

/**
 * Drops the files git would ignore: every `.gitignore` in the workspace counts, each for its own directory
 * and below (read through the workspace, so a session sees its own edits to them), with git's precedence:
 * a deeper file's rule overrides a shallower one's, the last matching line of a file wins, a `!` pattern
 * re-includes, and nothing inside an ignored directory can be re-included. Any directory named `.git` is
 * ignored whole. Not consulted: `.git/info/exclude`, `core.excludesFile` and the index (a tracked file that
 * matches a pattern is ignored here, where git would still list it): the workspace is a tree, not a repository.
 */
export async function withoutIgnored(
  source: SearchSource,
  files: readonly SearchEntry[],
  deadline: SearchDeadline,
): Promise<GitignoreSelection> {
  const rules = new GitignoreRules(source);
  const kept: SearchEntry[] = [];
  for (const file of files) {
    deadline.check();
    if (!(await rules.ignores(file.path))) kept.push(file);
  }
  return { kept, ignored: files.length - kept.length };
}

/** The `.gitignore` files of one search, each read once, and the verdict on each directory, decided once. */
class GitignoreRules {
  readonly #source: SearchSource;
  /** Directory → its `.gitignore`'s rules (undefined: none). */
  readonly #levels = new Map<NormalizedPath, Promise<IgnoreFile | undefined>>();
  /** Directory → whether it is ignored (so is everything below it). */
  readonly #directories = new Map<NormalizedPath, Promise<boolean>>();

  constructor(source: SearchSource) {
    this.#source = source;
  }

  async ignores(file: NormalizedPath): Promise<boolean> {
    const directory = parentPath(file);
    return (await this.#directoryIgnored(directory)) || (await this.#decide(file, directory, false));
  }

  #directoryIgnored(directory: NormalizedPath): Promise<boolean> {
    if (directory === '') return Promise.resolve(false);
    let verdict = this.#directories.get(directory);
    if (verdict === undefined) {
      const parent = parentPath(directory);
      verdict = (async () =>
        baseName(directory) === '.git' || (await this.#directoryIgnored(parent)) || this.#decide(directory, parent, true))();
      this.#directories.set(directory, verdict);
    }
    return verdict;
  }

  /** Whether `path` (in `directory`, none of whose ancestors is ignored) is ignored: see {@link judgeIgnored}. */
  async #decide(path: NormalizedPath, directory: NormalizedPath, isDirectory: boolean): Promise<boolean> {
    const levels: GitignoreLevel[] = [];
    for (const level of ancestry(directory)) {
      const rules = await this.#rules(level);
      if (rules !== undefined) levels.push({ directory: level, rules });
    }
    return judgeIgnored(levels, path, isDirectory);
  }

  #rules(directory: NormalizedPath): Promise<IgnoreFile | undefined> {
    let rules = this.#levels.get(directory);
    if (rules === undefined) {
      rules = this.#read(joinPath(directory, '.gitignore'));
      this.#levels.set(directory, rules);
    }
    return rules;
  }

  async #read(path: NormalizedPath): Promise<IgnoreFile | undefined> {
    let bytes: Uint8Array;
    try {
      bytes = await this.#source.readFile(path);
    } catch (error) {
      // Absent, not a file, a link out of the root, or hidden by policy: no rules here, like an unreadable one in git.
      const unreadable = [FileNotFoundError, IsADirectoryError, NotADirectoryError, PathEscapeError, PolicyError];
      if (unreadable.some((kind) => error instanceof kind)) return undefined;
      throw error;
    }
    return parseGitignore(bytes);
  }
}

/** One directory's `.gitignore` rules, and where that directory is. */
export interface GitignoreLevel {
  directory: NormalizedPath;
  rules: IgnoreFile;
}

/**
 * Whether git ignores `path`, given the `.gitignore` files of its directory and its ancestors (`levels`, the
 * shallowest first, each holding `path`) and given that none of its ancestor directories is ignored: the
 * deepest file whose rules speak about the path wins (a `!` line re-includes).
 */
export function judgeIgnored(levels: readonly GitignoreLevel[], path: NormalizedPath, isDirectory: boolean): boolean {
  let ignored = false;
  for (const { directory, rules } of levels) {
    const result = rules.verdict(relativeTo(path, directory), isDirectory);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/** A `.gitignore`'s rules from its bytes; undefined when they are not text (git would read nothing useful there either). */
export function parseGitignore(bytes: Uint8Array): IgnoreFile | undefined {
  const text = decodeText(bytes)?.text;
  // Case-sensitive, as git is by default where names are (core.ignorecase false), and as workspace paths are.
  return text === undefined ? undefined : new IgnoreFile(text);
}

/**
 * One `.gitignore`'s rules, asked about one path at a time, its ancestors already judged. `ignore`'s
 * `test` also applies the file's rules to the path's parents and lets an excluded parent decide; that is
 * right unless a deeper `.gitignore` re-included that parent (root `tmp/`, then a negated directory pattern
 * in `a/.gitignore`: git does not ignore `a/b/tmp/z.txt`). Only then is the path matched by itself, line by line.
 */
export class IgnoreFile {
  readonly #rules: Ignore;
  readonly #text: string;
  /** Each pattern line as a lone negation, so `unignored` says it matches the path itself (built on demand). */
  #lines: { negative: boolean; matches: Ignore }[] | undefined;

  constructor(text: string) {
    this.#text = text;
    this.#rules = ignore({ ignorecase: false }).add(text);
  }

  verdict(relative: string, isDirectory: boolean): { ignored: boolean; unignored: boolean } {
    const target = isDirectory ? `${relative}/` : relative;
    const slash = relative.lastIndexOf('/');
    if (slash < 0 || !this.#rules.test(relative.slice(0, slash + 1)).ignored) return this.#rules.test(target);
    this.#lines ??= this.#text
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '' && !line.startsWith('#'))
      .map((line) => {
        const negative = line.startsWith('!');
        return { negative, matches: ignore({ ignorecase: false }).add(negative ? line : `!${line}`) };
      });
    // The last line that matches decides, as in git.
    for (let index = this.#lines.length - 1; index >= 0; index -= 1) {
      const { negative, matches } = this.#lines[index] as { negative: boolean; matches: Ignore };
      if (matches.test(target).unignored) return { ignored: !negative, unignored: negative };
    }
    return { ignored: false, unignored: false };
  }
}

/** `directory` and its ancestors, the root first: `a/b` → `''`, `a`, `a/b`. */
function ancestry(directory: NormalizedPath): NormalizedPath[] {
  const levels: NormalizedPath[] = [''];
  if (directory === '') return levels;
  const names = directory.split('/');
  for (let index = 1; index <= names.length; index += 1) levels.push(names.slice(0, index).join('/'));
  return levels;
}
