import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';

// Host directories read and patched with plain fs and the git binary, independent of the code under test.

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
