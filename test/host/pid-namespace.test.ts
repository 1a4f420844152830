import { hostOf } from './support.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../cli/support.js';
import { createWorkspace, hostDriver } from '../../src/index.js';
import { tempDirs } from '../../src/testing/harness.js';

// Containers of one pod share a host name and often a directory, but not pids: a live writer in another
// pid namespace has a pid that here is another process, or none. Its temp files must never be swept.
const unshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']);
const unavailable = unshare.error !== undefined || unshare.status !== 0 ? 'unshare --pid is not available here (needs root)' : undefined;
if (unavailable) console.log(`skipping the pid-namespace sweep test: ${unavailable}`);

const OWNED_TEMP = join(REPO, 'dist/src/backends/host/owned-temp.js');
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const undo of cleanup.splice(0)) undo();
});

describe.skipIf(unavailable !== undefined)('temp files of a writer in another pid namespace', () => {
  const tempDir = tempDirs({ prefix: 'sessionfs-pidns-' });
  it('are kept by a workspace opening the root, while that writer runs', async () => {
    assertBuilt();
    const root = tempDir();
    // The writer: pid 1 of its own namespace (with its own /proc), naming a temp file as an atomic write does.
    const script = `const { ownerToken } = await import(${JSON.stringify(OWNED_TEMP)});
      const fs = await import('node:fs');
      const name = '.sessionfs-tmp-' + ownerToken() + '-0123456789abcdef';
      fs.writeFileSync(${JSON.stringify(root)} + '/' + name, 'half written');
      console.log(name);
      setInterval(() => {}, 1000);`;
    const writer: ChildProcess = spawn(
      'unshare',
      ['--pid', '--fork', '--kill-child', '--mount-proc', process.execPath, '--input-type=module', '-e', script],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    cleanup.push(() => writer.kill('SIGKILL'));
    const name = await new Promise<string>((resolve, reject) => {
      writer.stdout?.on('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
      writer.once('exit', () => reject(new Error('the writer exited early')));
    });
    expect(name).toMatch(/^\.sessionfs-tmp-1\./); // pid 1 there; here, another (live) process entirely

    const ws = createWorkspace(hostDriver({ root }));
    try {
      expect(await hostOf(ws).tempFilesSwept).toEqual([]);
      expect(existsSync(join(root, name))).toBe(true);
    } finally {
      await ws.dispose();
    }
  });
});
