import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeTracker } from '../../src/backends/host/changes.js';
import { HostGitSnapshotter } from '../../src/backends/host/git-snapshotter.js';
import type { WorkspaceSnapshot } from '../../src/workspace/types.js';
import { assertBuilt, REPO } from '../cli/support.js';
import { scratch } from './support.js';

/**
 * A prune by one process and a snapshot by another on the same git dir. Each child stops itself at the
 * worst moment (a synchronous wait inside a patched store method, until the parent writes a `go` file):
 * a snapshot whose objects are written, or reused from its cache, but whose ref has not moved yet; or a
 * prune that has listed the refs but removed nothing yet. Whatever the other side does meanwhile, every
 * snapshot must restore whole afterwards.
 */
const DIST = join(REPO, 'dist/src');
const { workspace, dir } = scratch();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Runs `script` (an ES module body) in a child; `paused` resolves when it prints `paused`, `done` with what it printed last. */
function child(script: string): { paused: Promise<void>; done: Promise<string> } {
  const body = `import * as fs from 'node:fs';
import { createWorkspace, hostDriver } from ${JSON.stringify(join(DIST, 'index.js'))};
import { GitStore } from ${JSON.stringify(join(DIST, 'backends/host/git/store.js'))};
const pauseIn = (method, go) => {
  const original = GitStore.prototype[method];
  GitStore.prototype[method] = function (...args) {
    console.log('paused');
    const cell = new Int32Array(new SharedArrayBuffer(4));
    while (!fs.existsSync(go)) Atomics.wait(cell, 0, 0, 5);
    GitStore.prototype[method] = original;
    return original.apply(this, args);
  };
};
${script}`;
  const started = spawn(process.execPath, ['--input-type=module', '-e', body], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(started);
  let text = '';
  let markPaused: () => void = () => undefined;
  const paused = new Promise<void>((resolve) => (markPaused = resolve));
  const done = new Promise<string>((resolve, reject) => {
    started.once('exit', (code) =>
      code === 0 ? resolve(text.trim().split('\n').at(-1) ?? '') : reject(new Error(`child exited with ${code}`)),
    );
  });
  started.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    if (text.includes('paused')) markPaused();
  });
  void done.catch(() => markPaused());
  return { paused, done };
}

/** Restores `record` into a fresh root on `gitDir` and returns its files. */
async function restoredFiles(gitDir: string, record: WorkspaceSnapshot): Promise<string[]> {
  const fresh = workspace({ root: dir(), gitDir });
  await fresh.restore(record);
  return (await fresh.list()).map((entry) => entry.name).sort();
}

const names = Array.from({ length: 30 }, (_, i) => `f${i}.txt`).sort();

describe('a prune and a snapshot in two processes on one git dir', () => {
  it('a prune while another process is in the middle of a snapshot is skipped, and runs once it is done', async () => {
    assertBuilt();
    const gitDir = dir('sessionfs-prune-race-git-');
    const go = join(dir(), 'go');
    // The child's cache names objects no ref reaches (its first snapshot released), and its second snapshot
    // reuses them: stopped just before its ref moves.
    const snapshotter = child(`
      import { releaseSnapshots } from ${JSON.stringify(join(DIST, 'workspace/snapshot-queue.js'))};
      const ws = createWorkspace(hostDriver({ root: ${JSON.stringify(dir())}, gitDir: ${JSON.stringify(gitDir)} }));
      for (let i = 0; i < 30; i += 1) await ws.write('f' + i + '.txt', 'child file ' + i + ' ' + Math.random());
      const first = await ws.snapshot();
      await releaseSnapshots(ws, [first]);
      pauseIn('writeRef', ${JSON.stringify(go)});
      const second = await ws.snapshot();
      console.log(JSON.stringify(second));`);
    await snapshotter.paused;

    const pruner = new HostGitSnapshotter(dir(), gitDir, 'scan', new ChangeTracker(), undefined);
    expect(await pruner.prune()).toEqual({ looseRemoved: 0, packsRemoved: 0, skipped: true });
    fs.writeFileSync(go, '');
    const second = JSON.parse(await snapshotter.done) as WorkspaceSnapshot;
    expect(await restoredFiles(gitDir, second)).toEqual(names);

    // Nothing uses the git dir now: the prune runs, removes the released snapshot's objects, keeps the rest.
    const pruned = await pruner.prune();
    expect(pruned.skipped).toBeUndefined();
    expect(pruned.packsRemoved + pruned.looseRemoved).toBeGreaterThan(0);
    expect(await restoredFiles(gitDir, second)).toEqual(names);
  });

  it('a snapshot while another process is in the middle of a prune waits for it', async () => {
    assertBuilt();
    const gitDir = dir('sessionfs-prune-race-git-');
    const go = join(dir(), 'go');
    // The child prunes, stopped after listing the refs and before removing anything.
    const prune = child(`
      import { HostGitSnapshotter } from ${JSON.stringify(join(DIST, 'backends/host/git-snapshotter.js'))};
      import { ChangeTracker } from ${JSON.stringify(join(DIST, 'backends/host/changes.js'))};
      createWorkspace(hostDriver({ root: ${JSON.stringify(dir())}, gitDir: ${JSON.stringify(gitDir)} })); // makes the git dir
      const pruner = new HostGitSnapshotter(${JSON.stringify(dir())}, ${JSON.stringify(gitDir)}, 'scan', new ChangeTracker(), undefined);
      pauseIn('announcePrune', ${JSON.stringify(go)});
      console.log(JSON.stringify(await pruner.prune()));`);
    await prune.paused;

    const ws = workspace({ root: dir(), gitDir });
    for (const name of names) await ws.write(name, `parent ${name}`);
    let settled = false;
    const pending = ws.snapshot().finally(() => (settled = true));
    // Long enough for an unguarded snapshot to finish (its objects would then be pruned by the child).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    fs.writeFileSync(go, '');
    expect(JSON.parse(await prune.done)).toMatchObject({ looseRemoved: 0 });
    const record = await pending;
    expect(await restoredFiles(gitDir, record)).toEqual(names);
  });
});
