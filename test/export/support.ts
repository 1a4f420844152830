import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { SnapshotTree } from '../../src/workspace/driver.js';

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

/** A git repository in `dir` holding what is there, committed. */
export async function gitRepo(dir: string): Promise<void> {
  const git = (...args: string[]) => execa('git', args, { cwd: dir });
  await git('init', '-q');
  await git('-c', 'core.fileMode=true', 'add', '-A');
  await git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'from');
}
