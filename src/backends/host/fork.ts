import * as fs from 'node:fs';
import { join } from 'node:path';
import { joinPath, type NormalizedPath } from '../../workspace/paths.js';
import { TimeSlices } from '../../workspace/time-slices.js';
import { READ_FLAGS } from '../../host-files/read-range.js';
import { isVisibleName } from '../../host-files/names.js';
import { removeOwnedTemp } from './owned-temp.js';
import { pinChild, pinDirectory, PIN_DIRECTORIES, Sandbox, type PinnedDir } from '../../host-files/sandbox.js';
import { markBorrowed } from './git/prune.js';
import { direntKind } from '../../host-files/walk.js';

/**
 * What a host fork is made of: a copy of the root (reflinked where the filesystem can share extents), and
 * a new git dir that borrows the parent's snapshot objects through git alternates and holds copies of the
 * parent's snapshot refs, so every snapshot taken before the fork restores in the fork.
 */

const SNAPSHOT_REFS = 'refs/sessionfs';

/**
 * Copies the visible tree of `sourceRoot` (files with their permission bits, links as links, empty
 * directories) into the empty directory `targetRoot`. Each source directory is pinned and each file opened
 * without following links before it is copied, so nothing outside the source root is ever read, even if a
 * program swaps a path for a link meanwhile. On Linux a file is copied from its open descriptor with
 * `COPYFILE_FICLONE`: a reflink (shared extents, O(1) per file) on filesystems that have them (btrfs, XFS),
 * a plain copy elsewhere (ext4, tmpfs). Other systems read and write it (no descriptor path to copy from).
 * The system calls are synchronous, in {@link TimeSlices} (as the host scan and an export's destination):
 * a thread-pool hop per call made a fork several times slower than `cp -r`.
 */
export async function copyRoot(sourceRoot: string, targetRoot: string): Promise<void> {
  const root = pinDirectory(new Sandbox(sourceRoot), '' as NormalizedPath, '' as NormalizedPath);
  try {
    await copyDir(root, targetRoot, '' as NormalizedPath, new TimeSlices());
  } finally {
    root.release();
  }
}

async function copyDir(source: PinnedDir, target: string, rel: NormalizedPath, slices: TimeSlices): Promise<void> {
  const subdirs: string[] = [];
  for (const dirent of fs.readdirSync(source.path, { withFileTypes: true })) {
    if (!isVisibleName(dirent.name)) continue;
    // A filesystem that does not report entry types (DT_UNKNOWN) is asked through the pin, as the walk does.
    const kind = direntKind(dirent, source);
    if (kind === 'directory') subdirs.push(dirent.name);
    else if (kind !== undefined) copyEntry(source, dirent.name, kind, join(target, dirent.name));
    await slices.turn();
  }
  for (const name of subdirs) {
    const childRel = joinPath(rel, name);
    fs.mkdirSync(join(target, name));
    const child = pinChild(source, name, childRel);
    try {
      await copyDir(child, join(target, name), childRel, slices);
    } finally {
      child.release();
    }
  }
  fs.chmodSync(target, fs.statSync(source.path).mode & 0o7777);
}

/** Copies a file or link (FIFOs, sockets and devices are not workspace content: `direntKind` leaves them out). */
function copyEntry(source: PinnedDir, name: string, kind: 'file' | 'symlink', target: string): void {
  const path = source.at(name);
  if (kind === 'symlink') {
    fs.symlinkSync(fs.readlinkSync(path, { encoding: 'buffer' }), target);
    return;
  }
  const fd = fs.openSync(path, READ_FLAGS);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return; // swapped for something else since it was listed
    if (PIN_DIRECTORIES) {
      // The open descriptor, by its /proc name: the file we opened without following a link, not the path.
      fs.copyFileSync(`/proc/self/fd/${fd}`, target, fs.constants.COPYFILE_EXCL | fs.constants.COPYFILE_FICLONE);
    } else {
      fs.writeFileSync(target, fs.readFileSync(fd), { flag: 'wx' });
    }
    fs.chmodSync(target, st.mode & 0o7777);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Makes `gitDir` (a new, initialised repository) borrow the objects of `parentGitDir` (alternates, which the
 * parent's own alternates extend) and copies the parent's snapshot refs, loose and packed.
 */
export function shareSnapshots(parentGitDir: string, gitDir: string): void {
  markBorrowed(parentGitDir);
  fs.writeFileSync(join(gitDir, 'objects', 'info', 'alternates'), `${join(parentGitDir, 'objects')}\n`);
  copyRefs(join(parentGitDir, SNAPSHOT_REFS), join(gitDir, SNAPSHOT_REFS));
  let packed: string;
  try {
    packed = fs.readFileSync(join(parentGitDir, 'packed-refs'), 'utf8');
  } catch {
    return;
  }
  const kept = packed.split('\n').filter((line) => line.startsWith('#') || line.includes(` ${SNAPSHOT_REFS}/`));
  fs.writeFileSync(join(gitDir, 'packed-refs'), `${kept.join('\n')}\n`);
}

function copyRefs(from: string, to: string): void {
  let dirents: fs.Dirent[];
  try {
    dirents = fs.readdirSync(from, { withFileTypes: true });
  } catch {
    return;
  }
  fs.mkdirSync(to, { recursive: true });
  for (const dirent of dirents) {
    if (dirent.isDirectory()) copyRefs(join(from, dirent.name), join(to, dirent.name));
    else if (dirent.isFile() && !dirent.name.endsWith('.lock')) fs.copyFileSync(join(from, dirent.name), join(to, dirent.name));
  }
}

/**
 * Git dirs whose objects live forks borrow: a workspace that owns one removes it on dispose only once no
 * fork borrows it any more (else the fork's history would lose its objects). A fork borrows its parent's
 * git dir and everything the parent borrows, since alternates chain. At exit every owned temp goes anyway.
 */
const borrowers = new Map<string, number>();
const removeWhenReturned = new Set<string>();

export function borrowGitDirs(gitDirs: readonly string[]): void {
  for (const dir of gitDirs) borrowers.set(dir, (borrowers.get(dir) ?? 0) + 1);
}

export function returnGitDirs(gitDirs: readonly string[]): void {
  for (const dir of gitDirs) {
    const left = (borrowers.get(dir) ?? 1) - 1;
    if (left > 0) {
      borrowers.set(dir, left);
      continue;
    }
    borrowers.delete(dir);
    if (removeWhenReturned.delete(dir)) removeOwnedTemp(dir);
  }
}

/** Removes an owned git dir now, or when the last fork borrowing it is disposed. */
export function removeOwnedGitDir(gitDir: string): void {
  if ((borrowers.get(gitDir) ?? 0) > 0) removeWhenReturned.add(gitDir);
  else removeOwnedTemp(gitDir);
}
