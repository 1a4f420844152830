import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isTempName } from '../../src/backends/host/index.js';
import { hostTag, ownerToken } from '../../src/backends/host/owned-temp.js';
import { scratch, hostOf } from './support.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';

/** The temp files of atomic writes under `dir` (workspace paths), sorted. */
function tempFiles(dir: string, rel = ''): string[] {
  return fs
    .readdirSync(join(dir, rel), { withFileTypes: true })
    .flatMap((dirent) => {
      const path = rel === '' ? dirent.name : `${rel}/${dirent.name}`;
      if (isTempName(dirent.name)) return [path];
      return dirent.isDirectory() ? tempFiles(dir, path) : [];
    })
    .sort();
}

/** The pid of a process that has ended (and been reaped). */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim());
}

/** A temp file name as a writer with this owner token leaves it when killed mid-write. */
const tempName = (owner: string, hex: string) => `.sessionfs-tmp-${owner}-${hex.padEnd(16, '0')}`;

/** Field `index` (1-based, as proc(5) counts) of /proc/<pid>/stat, or undefined once the process is gone. */
function statField(pid: number, index: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[index - 3];
  } catch {
    return undefined;
  }
}

describe('temp files of killed writers do not outlive a restore', () => {
  const { workspace, dir } = scratch();
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it('a writer killed but not yet reaped (a zombie) counts as dead: the next open removes its temp file', async () => {
    // `sleep 0.05` is left unreaped by its parent (sh exec'd into `sleep 30`, which never waits): a zombie
    // with a pid and a start time, as a kill -9'd process is until its parent reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'inherit'] });
    started.push(parent.pid as number);
    const zombie = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
    );
    await expect.poll(() => statField(zombie, 3), { timeout: 5000 }).toBe('Z');
    const root = dir();
    const stale = tempName(`${zombie}.${statField(zombie, 22)}.${hostTag()}`, 'abc');
    fs.writeFileSync(join(root, stale), '');
    const ws = workspace({ root });
    expect(await hostOf(ws).tempFilesSwept).toEqual([stale]);
    expect(tempFiles(root)).toEqual([]);
  });

  it.each(['scan', 'tracked'] as const)(
    '%s: a restore removes the dead writers’ temp files where it writes and where its scan saw them, never a live one',
    async (changeDetection) => {
      const root = dir();
      for (const sub of ['a', 'b', 'c']) {
        fs.mkdirSync(join(root, sub));
        fs.writeFileSync(join(root, sub, 'x.txt'), sub);
      }
      const gitDir = dir('sessionfs-restore-temps-git-');
      const ws = workspace({ root, gitDir, changeDetection });
      await hostOf(ws).tempFilesSwept;
      const before = await ws.snapshot();
      await ws.write('a/x.txt', 'changed');
      // A writer of another process on this root, killed mid-write after this workspace opened.
      const dead = `${deadPid()}.1.${hostTag()}`;
      const left = ['', 'a', 'b'].map((sub, index) => (sub === '' ? '' : `${sub}/`) + tempName(dead, `dead${index}`));
      for (const path of left) fs.writeFileSync(join(root, path), 'half written');
      // And a live writer's (this process's) in the directory the restore writes into.
      const live = `a/${tempName(ownerToken(), 'a1fe')}`;
      fs.writeFileSync(join(root, live), 'being written');
      if (changeDetection === 'tracked') ws.markChanged(['b']);

      await ws.restore(before);
      expect(fs.readFileSync(join(root, 'a/x.txt'), 'utf8')).toBe('a');
      expect(tempFiles(root)).toEqual([live]);
      expect(await ws.diff(before)).toEqual([]);
    },
  );

  it('the first restore after opening waits for the open sweep: a stale temp file anywhere is gone when it resolves', async () => {
    const root = dir();
    for (let i = 0; i < 200; i += 1) {
      fs.mkdirSync(join(root, `d${i}`));
      fs.writeFileSync(join(root, `d${i}`, 'f.txt'), `${i}`);
    }
    const gitDir = dir('sessionfs-restore-temps-git-');
    const first = createWorkspace(hostDriver({ root, gitDir, changeDetection: 'tracked' }));
    const snapshot = await first.snapshot();
    await first.dispose();
    const stale = `d199/${tempName(`${deadPid()}.1.${hostTag()}`, 'fa4')}`;
    fs.writeFileSync(join(root, stale), '');
    const ws = workspace({ root, gitDir, changeDetection: 'tracked' });
    await ws.restore(snapshot); // nothing to change: the restore itself writes nowhere
    expect(tempFiles(root)).toEqual([]);
  });
});
