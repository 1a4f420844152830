import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp-server.js';
import { createSession } from '../../src/session/index.js';
import { assertBuilt, CLI, connectInMemory, REPO, slowWrites } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mcp server: cancellation', () => {
  it('a call the client cancels is rolled back, not completed behind its back', async () => {
    await using session = await createSession({ backend: 'memory' });
    const real = session.filesystem;
    slowWrites(session, 100);
    const server = await createMcpServer(session);
    const client = await connectInMemory(server, 'review');
    try {
      const controller = new AbortController();
      const call = client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }, undefined, {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 20);
      await expect(call).rejects.toThrow();
      await sleep(250);
      // Reproduced: x.txt was written although the client had cancelled the call.
      expect(await real.exists('x.txt')).toBe(false);
      expect(session.calls.at(-1)?.result).toMatchObject({ rolledBack: true, code: 'ABORT_ERR' });
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('sessionfs mcp --backend host: signals', () => {
  const tempDir = tempDirs({ prefix: 'sessionfs-review-sig-' });
  it('a SIGTERM while the mounts are hydrating removes the temp root and git dir', async () => {
    assertBuilt();
    const dir = tempDir();
    const temp = join(dir, 'tmp');
    mkdirSync(temp);
    for (let d = 0; d < 50; d += 1) {
      mkdirSync(join(dir, 'big', `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f += 1) writeFileSync(join(dir, 'big', `d${d}`, `f${f}.txt`), 'x'.repeat(1000));
    }
    const child = spawn(process.execPath, [CLI, 'mcp', '--backend', 'host', '--mount', join(dir, 'big'), '--allow', dir], {
      cwd: REPO,
      env: { ...process.env, TMPDIR: temp },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // As soon as the workspace root exists, hydration is under way.
    while (!readdirSync(temp).some((name) => name.startsWith('sessionfs-root-'))) await sleep(2);
    child.kill('SIGTERM');
    await exited;
    // Reproduced: sessionfs-root-… (half hydrated) and sessionfs-git-… were left behind.
    expect(readdirSync(temp)).toEqual([]);
  });
});
