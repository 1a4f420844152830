import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach } from 'vitest';
import type { SnapshotTree } from '../../src/workspace/driver.js';

/** Fresh real temp directories, removed after each test. */
export function tempDirs(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sessionfs-export-')));
    dirs.push(dir);
    return dir;
  };
}

/** Writes a snapshot tree into an empty host directory with plain fs (independent of the code under test). */
export async function materialize(tree: SnapshotTree, dir: string): Promise<void> {
  for await (const entry of tree.entries()) {
    const target = join(dir, entry.path);
    if (entry.kind === 'directory') mkdirSync(target, { recursive: true });
    else if (entry.kind === 'symlink') symlinkSync(Buffer.from(await entry.bytes()), target);
    else {
      writeFileSync(target, await entry.bytes());
      chmodSync(target, entry.executable ? 0o755 : 0o644);
    }
  }
}

/** Files and symlinks below `dir` (not `.git`): `path → 'file 100755 <latin1 bytes>'` or `'link <target>'`. */
export function filesOf(dir: string, base = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(dir, base))) {
    if (base === '' && name === '.git') continue;
    const path = base === '' ? name : `${base}/${name}`;
    const info = lstatSync(join(dir, path));
    if (info.isSymbolicLink()) out[path] = `link ${readlinkSync(join(dir, path))}`;
    else if (info.isDirectory()) Object.assign(out, filesOf(dir, path));
    else out[path] = `file ${(info.mode & 0o100) !== 0 ? '100755' : '100644'} ${readFileSync(join(dir, path)).toString('latin1')}`;
  }
  return out;
}

/** A git repository in `dir` holding what is there, committed. */
export async function gitRepo(dir: string): Promise<void> {
  const git = (...args: string[]) => execa('git', args, { cwd: dir });
  await git('init', '-q');
  await git('-c', 'core.fileMode=true', 'add', '-A');
  await git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'from');
}

/** Applies a patch with native git (`git apply --binary`) in `dir`; throws with git's message when it refuses. */
export async function gitApply(dir: string, patch: string): Promise<void> {
  const file = join(dir, '..', `${Math.random().toString(36).slice(2)}.patch`);
  writeFileSync(file, patch);
  try {
    await execa('git', ['apply', '--binary', '--allow-empty', '--whitespace=nowarn', file], { cwd: dir });
  } finally {
    rmSync(file, { force: true });
  }
}
