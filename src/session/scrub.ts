/**
 * Removes host paths from a message before it can reach a model.
 *
 * - A path under the workspace `root` becomes its workspace form (`<root>/src/a.ts` → `/src/a.ts`).
 * - A path under any of `hostDirs` (the git dir, allowed roots, home, the working directory…) becomes
 *   `<host path>`, whole. An entry ending in `*` names a prefix of names in one directory: `/tmp/sessionfs-*`
 *   hides `/tmp/sessionfs-root-x/a.ts`, not `/tmp/tmp.x` (a session hides its own temp directories, not every
 *   program's, see `host-dirs.ts`).
 * - The slash-less form of the root or of one of `hostDirs` (`tmp/ws/b.ts`, what normalising a host path
 *   into a workspace path makes of it) becomes `<host path>`, when it has two segments or more.
 * - With `allAbsolute` (messages of errors that are not `WorkspaceError`s, e.g. Node's
 *   `ENOENT: no such file or directory, open '/…'`), every other absolute-looking path becomes `<path>` too.
 *
 * The one redaction function of the project: sessions, tool results, the MCP server, the shell and the CLI
 * all go through it.
 */
export interface ScrubOptions {
  root?: string | undefined;
  hostDirs?: readonly string[];
  allAbsolute?: boolean;
}

interface Segment {
  text: string;
  /** Already scrubbed: later passes leave it alone. */
  done: boolean;
}

/** Characters that end a path inside a message. */
const PATH_END = /[\s'"`,;()<>[\]{}]/;
const NAME_CHAR = /[\w.-]/;
/** A character that, right before a host directory's leading `/`, makes it the tail of a longer (workspace) path. */
const NAME_BEFORE = /[\p{L}\p{N}\p{M}_.~+-]/u;
const ABSOLUTE = /(^|[\s'"`(=<[{,:])((?:[A-Za-z]:)?[\\/][^\s'"`,;()<>[\]{}]+)/g;

const NO_DIRS: readonly string[] = Object.freeze([]);

export function scrubHostPaths(message: string, options: ScrubOptions): string {
  const plan = planFor(options.root, options.hostDirs ?? NO_DIRS);
  // Every replacement below starts at an occurrence of one of the needles: a message holding none (most
  // tool output: file contents, listings) is returned as it is, after one substring search per needle.
  if (options.allAbsolute !== true && !plan.needles.some((needle) => message.includes(needle))) return message;
  let segments: Segment[] = [{ text: message, done: false }];
  if (plan.root !== undefined) segments = replacePrefix(segments, plan.root, (rest) => (rest === '' ? '/' : rest));
  for (const dir of plan.dirs) segments = replacePrefix(segments, dir, () => '<host path>', plan.namePrefixes.has(dir));
  segments = replaceBareForms(segments, plan);
  if (options.allAbsolute === true) {
    segments = segments.map((segment) =>
      segment.done ? segment : { text: segment.text.replace(ABSOLUTE, (_match, lead: string) => `${lead}<path>`), done: true },
    );
  }
  return segments.length === 1 ? (segments[0] as Segment).text : segments.map((segment) => segment.text).join('');
}

/** What one set of options hides: the root and directories in the order they are replaced, and their bare forms. */
interface ScrubPlan {
  root: string | undefined;
  dirs: string[];
  /** The directories of `dirs` given with a final `*` (stripped): names starting with it are hidden. */
  namePrefixes: ReadonlySet<string>;
  /** The slash-less forms (longest first), and one pattern matching any of them as a whole path. */
  bare: string[];
  barePattern: RegExp | undefined;
  /**
   * Substrings every form of a hidden path contains: a directory's bare form when it has one (the
   * directory itself contains it), else the directory.
   */
  needles: string[];
}

/** Plans by options: a session scrubs every call's result with the same root and directories. */
const plans = new Map<string, ScrubPlan>();
const MAX_PLANS = 64;

/**
 * The plan last used with each list of directories, and a copy of the list it was made from: a session (and
 * the MCP server) scrub every call's result with one list, which then costs no key to build and look up.
 * The copy catches a caller changing its list in place.
 */
const lastPlans = new WeakMap<readonly string[], { root: string | undefined; dirs: string[]; plan: ScrubPlan }>();

function planFor(rootOption: string | undefined, hostDirs: readonly string[]): ScrubPlan {
  const last = lastPlans.get(hostDirs);
  if (last !== undefined && last.root === rootOption && sameList(last.dirs, hostDirs)) return last.plan;
  const plan = keyedPlan(rootOption, hostDirs);
  lastPlans.set(hostDirs, { root: rootOption, dirs: [...hostDirs], plan });
  return plan;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

function keyedPlan(rootOption: string | undefined, hostDirs: readonly string[]): ScrubPlan {
  const key = `${rootOption ?? ''}\0${hostDirs.join('\0')}`;
  let plan = plans.get(key);
  if (plan !== undefined) return plan;
  const root = rootOption !== undefined && rootOption !== '/' && rootOption !== '' ? stripSlash(rootOption) : undefined;
  const namePrefixes = new Set(hostDirs.filter((dir) => dir.length > 2 && dir.endsWith('*')).map((dir) => dir.slice(0, -1)));
  const dirs = [...new Set(hostDirs.filter((dir) => dir.length > 1).map((dir) => (dir.endsWith('*') ? dir.slice(0, -1) : stripSlash(dir))))]
    .filter((dir) => dir.length > 1)
    .sort((a, b) => b.length - a.length);
  const bare = (root === undefined ? dirs : [root, ...dirs])
    .filter((dir) => dir.startsWith('/') && dir.length > 2)
    .map((dir) => dir.slice(1))
    .filter((dir) => dir.includes('/'))
    .sort((a, b) => b.length - a.length);
  // A name prefix's bare form takes the rest of that name with it (`tmp/sessionfs-exec-1`).
  const escaped = bare
    .map((dir) => dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + (namePrefixes.has(`/${dir}`) ? '[\\p{L}\\p{N}\\p{M}_.~+-]*' : ''))
    .join('|');
  const barePattern =
    bare.length === 0 ? undefined : new RegExp(`(?<![\\p{L}\\p{N}\\p{M}_.~+/-])(?:${escaped})(?![\\p{L}\\p{N}\\p{M}_.~+-])`, 'gu');
  const forms = (root === undefined ? dirs : [root, ...dirs]).map((dir) =>
    dir.startsWith('/') && dir.length > 2 && dir.slice(1).includes('/') ? dir.slice(1) : dir,
  );
  // A message holding a form holds every shorter form inside it: only those are searched (a source's form
  // holds the working directory's when it lies below it; the full text of a read is searched for each).
  const needles = [...new Set(forms)].filter((form, _i, all) => !all.some((other) => other !== form && form.includes(other)));
  plan = { root, dirs, namePrefixes, bare, barePattern, needles };
  if (plans.size >= MAX_PLANS) plans.clear();
  plans.set(key, plan);
  return plan;
}

/**
 * Only as a whole path of two segments or more: a one-segment form (`tmp`, `app`, `data`) is an ordinary
 * word, and replacing it anywhere mangled file contents and workspace paths (`import tmp from "tmp"`).
 * The (unicode) pattern runs only over a segment that holds one of the forms at all: a plain substring
 * search first, so a large output without host paths costs one scan per form.
 */
function replaceBareForms(segments: Segment[], plan: ScrubPlan): Segment[] {
  const pattern = plan.barePattern;
  if (pattern === undefined) return segments;
  return segments.map((segment) =>
    segment.done || !plan.bare.some((form) => segment.text.includes(form))
      ? segment
      : { text: segment.text.replace(pattern, '<host path>'), done: false },
  );
}

function stripSlash(path: string): string {
  return path.length > 1 && (path.endsWith('/') || path.endsWith('\\')) ? path.slice(0, -1) : path;
}

/**
 * Replaces every occurrence of `prefix` (as a whole path prefix, or as the start of a name when `namePrefix`)
 * plus the rest of that path.
 */
function replacePrefix(segments: Segment[], prefix: string, replace: (rest: string) => string, namePrefix = false): Segment[] {
  const out: Segment[] = [];
  const singleSegment = !/[\\/]/.test(prefix.slice(1));
  for (const segment of segments) {
    if (segment.done) {
      out.push(segment);
      continue;
    }
    const text = segment.text;
    let from = 0;
    let search = 0;
    while (search <= text.length) {
      const index = text.indexOf(prefix, search);
      if (index === -1) break;
      const after = index + prefix.length;
      const next = text[after];
      // A whole path: `/tmp` must not match inside the workspace path `src/tmp/a.ts`. Only for one-segment
      // directories (`/tmp`, `/app`, `/home`): longer ones are specific enough to hide wherever they appear
      // (`-I/tmp/sessionfs-root-x/include` in a build log).
      if (singleSegment && index > 0 && NAME_BEFORE.test(text[index - 1] as string)) {
        search = index + 1;
        continue;
      }
      // A whole prefix: `/tmp/ws` must not match inside `/tmp/ws2`.
      if (
        !namePrefix &&
        next !== undefined &&
        next !== '/' &&
        next !== '\\' &&
        NAME_CHAR.test(next) &&
        !(next === '.' && (after + 1 === text.length || /\s/.test(text[after + 1] as string)))
      ) {
        search = index + 1;
        continue;
      }
      let end = after;
      while (end < text.length && !PATH_END.test(text[end] as string)) end += 1;
      // A sentence's final dot is not part of the path.
      while (end > after && /[.:]/.test(text[end - 1] as string)) end -= 1;
      if (index > from) out.push({ text: text.slice(from, index), done: false });
      out.push({ text: replace(text.slice(after, end)), done: true });
      from = end;
      search = end;
    }
    if (from < text.length) out.push({ text: text.slice(from), done: false });
  }
  return out;
}
