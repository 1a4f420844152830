import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { pullSnapshot, pushSnapshot } from '../../src/export/remote.js';
import { tempDirs } from '../../src/testing/harness.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

/** Whether a process is still running (a zombie waiting for its parent to reap it counts as gone). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * A remote operation only ever talks to the transports the docs name, and never outlives its deadline:
 * git and what it started are killed, and its temporary repository (`sessionfs-remote-*`) is removed.
 */
describe('pushSnapshot / pullSnapshot: transports and deadline', () => {
  const tempDir = tempDirs();
  const saved = { TMPDIR: process.env.TMPDIR, GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND };
  /** A fresh TMPDIR for the call: what the remote operation leaves in its temp directory shows there. */
  const ownTmp = (): string => {
    const dir = tempDir('sessionfs-remote-test-');
    process.env.TMPDIR = dir;
    return dir;
  };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('refuses every transport but a path, file://, https:// and ssh://, before git runs', async () => {
    const workspace = createWorkspace(memoryDriver());
    const snapshot = await workspace.snapshot();
    const temp = ownTmp();
    const refused = [
      'fd::0',
      'ext::sh -c true',
      'foo::bar',
      'ssh::host/x',
      'host:repo.git',
      'git://example.com/x',
      'http://example.com/x',
      '-x',
      'a\nb',
    ];
    for (const remote of refused) {
      const started = Date.now();
      await expect(pushSnapshot(workspace, snapshot, { remote }), remote).rejects.toMatchObject({ code: 'EINVAL' });
      await expect(pullSnapshot(workspace, { remote, ref: 'refs/x' }), remote).rejects.toMatchObject({ code: 'EINVAL' });
      expect(Date.now() - started).toBeLessThan(2000);
    }
    expect(readdirSync(temp)).toEqual([]);
    await expect(pushSnapshot(workspace, snapshot, { remote: join(temp, 'x'), timeoutMs: 0 })).rejects.toMatchObject({ code: 'EINVAL' });
    await workspace.dispose();
  });

  it('takes file:// URLs and paths with a colon after a slash', async () => {
    const dir = tempDir();
    const remote = join(dir, 'odd:name.git');
    await execa('git', ['init', '--bare', '-q', remote]);
    const workspace = createWorkspace(memoryDriver());
    await workspace.write('a.txt', 'a');
    const snapshot = await workspace.snapshot();
    await expect(pushSnapshot(workspace, snapshot, { remote: `file://${remote}`, ref: 'refs/x/one' })).resolves.toMatchObject({
      ref: 'refs/x/one',
    });
    await expect(pushSnapshot(workspace, snapshot, { remote, ref: 'refs/x/two' })).resolves.toMatchObject({ ref: 'refs/x/two' });
    await workspace.dispose();
  });

  it('stops a remote that never answers at the deadline: ETIMEDOUT, nothing left running, the temp repository removed', async () => {
    const dir = tempDir();
    const pids = join(dir, 'pids');
    const ssh = join(dir, 'ssh-that-hangs');
    // What git runs for ssh://: it records its pid and never answers (as a host that accepts the
    // connection and then says nothing).
    writeFileSync(ssh, `#!/bin/sh\necho $$ >> '${pids}'\nexec sleep 300\n`, { mode: 0o755 });
    process.env.GIT_SSH_COMMAND = ssh;
    const workspace = createWorkspace(memoryDriver());
    await workspace.write('a.txt', 'a');
    const snapshot = await workspace.snapshot();
    const temp = ownTmp();
    const remote = 'ssh://example.invalid/repo.git';
    for (const operation of [
      () => pushSnapshot(workspace, snapshot, { remote, timeoutMs: 1000 }),
      () => pullSnapshot(workspace, { remote, ref: 'refs/x', timeoutMs: 1000 }),
    ]) {
      const started = Date.now();
      await expect(operation()).rejects.toMatchObject({ code: 'ETIMEDOUT', message: expect.not.stringContaining('example.invalid') });
      expect(Date.now() - started).toBeLessThan(10_000);
    }
    const started = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(started).toHaveLength(2);
    for (const pid of started) await expect.poll(() => running(pid), { timeout: 2000 }).toBe(false);
    expect(readdirSync(temp)).toEqual([]);
    expect((await workspace.read('a.txt')).content).toBe('a');
    await workspace.dispose();
  });
});
