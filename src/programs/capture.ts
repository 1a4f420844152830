import * as fs from 'node:fs';
import { join } from 'node:path';
import { InvalidPathError, LimitExceededError } from '../workspace/errors.js';
import { compareStrings, printable } from '../workspace/paths.js';
import { opaqueDirectories } from './opaque.js';
import type { ExecChanges, ExecLimits } from './types.js';

/**
 * One change a program made, in the order to apply them (a directory before what it holds). `replace`:
 * what stood at the path before (another kind of entry, or a directory the program emptied by removing
 * and making it again) is removed first.
 */
export type StagedChange =
  | { kind: 'delete'; path: string }
  | { kind: 'directory'; path: string; replace: boolean }
  | {
      kind: 'file';
      path: string;
      /** Where the bytes are, in the staging layer (read when applied, never kept in memory whole). */
      source: string;
      sizeBytes: number;
      executable: boolean;
      replace: boolean;
      /** False when only the executable bit changed. */
      contentChanged: boolean;
      /** The executable bit differs from the file's before (false for a new file). */
      modeChanged: boolean;
    }
  | { kind: 'symlink'; path: string; target: string; replace: boolean };

export interface Capture {
  changes: StagedChange[];
  summary: ExecChanges;
}

/** What one run may leave: see {@link ExecLimits}. */
export type CaptureLimits = Required<Pick<ExecLimits, 'fileBytes' | 'changedBytes' | 'changedEntries'>>;

/** What stood at a path in the lower tree. */
type LowerKind = 'file' | 'directory' | 'symlink' | 'other' | undefined;

const isWhiteout = (stat: fs.Stats): boolean => stat.isCharacterDevice() && stat.rdev === 0;
const isExecutable = (stat: fs.Stats): boolean => (stat.mode & 0o100) !== 0;

/**
 * Reads what a program changed from the staging (upper) layer of its overlay: created and modified files
 * (with their executable bit), symlinks (their target text), new directories, deleted entries (whiteouts)
 * and directories removed and made again (opaque). It walks the staging layer and looks up only those
 * paths in `lower`, so its cost is what the program wrote, not the tree's size. A file as large as
 * `fileBytes` was cut by RLIMIT_FSIZE: `LimitExceededError`; so are more than `changedEntries` entries in the
 * staging layer (counted while it is walked, before they are all held) and changed files holding more than
 * `changedBytes` in total (sparse files count their size: applied, they are that many bytes). A file the
 * program rewrote with the same bytes and bit is no change (and costs nothing). Sockets, fifos and devices are not content and are left out; one made where an
 * entry stood below removed that entry, which is a deletion. A name that is not UTF-8 cannot be a
 * workspace path: `InvalidPathError`.
 */
export async function captureChanges(upper: string, lower: string, limits: CaptureLimits): Promise<Capture> {
  const { fileBytes, changedBytes, changedEntries } = limits;
  const entries: { path: string; stat: fs.Stats }[] = [];
  await walk(upper, '', entries, changedEntries);
  let contentBytes = 0;
  // Directories that were there below: one of them marked opaque was removed and made again.
  const candidates = entries.filter((entry) => entry.stat.isDirectory() && lowerKind(lower, entry.path) === 'directory');
  const opaque = await opaqueDirectories(
    upper,
    candidates.map((entry) => entry.path),
  );
  const changes: StagedChange[] = [];
  const summary: ExecChanges = { created: [], modified: [], deleted: [] };
  /** Under a new or opaque directory nothing below shows through: no lookups in lower there. */
  const fresh = new Set<string>();
  const isFresh = (path: string) => {
    for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) if (fresh.has(path.slice(0, end))) return true;
    return false;
  };
  for (const { path, stat } of entries) {
    const below: LowerKind = isFresh(path) ? undefined : lowerKind(lower, path);
    const existed = below !== undefined;
    if (isWhiteout(stat)) {
      if (!existed) continue;
      changes.push({ kind: 'delete', path });
      summary.deleted.push(path);
    } else if (stat.isDirectory()) {
      const replace = (existed && below !== 'directory') || opaque.has(path);
      if (below === 'directory' && !replace) continue;
      if (replace && below === 'directory') {
        // The program emptied it: what was below and is not made again is deleted.
        const kept = new Set(entries.filter((entry) => entry.path.startsWith(`${path}/`)).map((entry) => entry.path));
        for (const name of listNames(join(lower, path))) if (!kept.has(`${path}/${name}`)) summary.deleted.push(`${path}/${name}`);
      }
      fresh.add(path);
      changes.push({ kind: 'directory', path, replace });
      (existed ? summary.modified : summary.created).push(path);
    } else if (stat.isFile()) {
      if (stat.size >= fileBytes) {
        throw new LimitExceededError(`the program wrote a file of ${fileBytes} bytes or more, the sandbox's file size limit`, path);
      }
      const source = join(upper, path);
      const executable = isExecutable(stat);
      let contentChanged = true;
      let modeChanged = false;
      if (below === 'file') {
        const before = fs.lstatSync(join(lower, path));
        modeChanged = isExecutable(before) !== executable;
        contentChanged = before.size !== stat.size || !(await sameBytes(source, join(lower, path)));
        if (!contentChanged && !modeChanged) continue;
      }
      if (contentChanged) contentBytes += stat.size;
      if (contentBytes > changedBytes) {
        throw new LimitExceededError(
          `the program changed more than ${changedBytes} bytes of file content in one run, its limit (exec limits.changedBytes): nothing was applied`,
        );
      }
      changes.push({
        kind: 'file',
        path,
        source,
        sizeBytes: stat.size,
        executable,
        replace: existed && below !== 'file',
        contentChanged,
        modeChanged,
      });
      (existed ? summary.modified : summary.created).push(path);
    } else if (stat.isSymbolicLink()) {
      const target = fs.readlinkSync(join(upper, path));
      if (below === 'symlink' && fs.readlinkSync(join(lower, path)) === target) continue;
      changes.push({ kind: 'symlink', path, target, replace: existed });
      (existed ? summary.modified : summary.created).push(path);
    } else if (existed) {
      // A fifo, socket or device in place of what stood below: the program removed that entry.
      changes.push({ kind: 'delete', path });
      summary.deleted.push(path);
    }
  }
  for (const list of [summary.created, summary.modified, summary.deleted]) list.sort(compareStrings);
  return { changes, summary };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Every entry of the staging layer, each directory before what it holds, siblings in name order; at most `max`. */
async function walk(root: string, rel: string, into: { path: string; stat: fs.Stats }[], max: number): Promise<void> {
  const raw = await fs.promises.readdir(rel === '' ? root : join(root, rel), { encoding: 'buffer' });
  if (into.length + raw.length > max) {
    throw new LimitExceededError(
      `the program changed more than ${max} entries in one run, its limit (exec limits.changedEntries): nothing was applied`,
    );
  }
  const names = raw.map((bytes) => utf8Name(bytes, rel)).sort(compareStrings);
  for (const name of names) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const stat = await fs.promises.lstat(join(root, path));
    into.push({ path, stat });
    if (stat.isDirectory()) await walk(root, path, into, max);
  }
}

/** A name as a workspace path segment; one that is not UTF-8 would decode to a different name (U+FFFD), so is refused. */
function utf8Name(bytes: Buffer, rel: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    const shown = [...bytes]
      .map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`))
      .join('');
    const path = rel === '' ? shown : `${printable(rel)}/${shown}`;
    throw new InvalidPathError(path, `the program made an entry whose name is not UTF-8 (${path}): a workspace path is text`);
  }
}

/** The kind of entry at `path` in the lower tree, never following a link (its parents are real directories: see the walk). */
function lowerKind(lower: string, path: string): LowerKind {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(join(lower, path));
  } catch {
    return undefined;
  }
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isDirectory()) return 'directory';
  if (stat.isFile()) return 'file';
  return 'other';
}

function listNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Whether two files of the same size hold the same bytes, read in chunks. */
async function sameBytes(a: string, b: string): Promise<boolean> {
  const [left, right] = await Promise.all([fs.promises.open(a, 'r'), fs.promises.open(b, 'r')]);
  try {
    const size = 256 * 1024;
    const one = Buffer.alloc(size);
    const two = Buffer.alloc(size);
    for (;;) {
      const [x, y] = await Promise.all([left.read(one, 0, size, null), right.read(two, 0, size, null)]);
      if (x.bytesRead !== y.bytesRead) return false;
      if (x.bytesRead === 0) return true;
      if (!one.subarray(0, x.bytesRead).equals(two.subarray(0, y.bytesRead))) return false;
    }
  } finally {
    await Promise.all([left.close(), right.close()]);
  }
}
