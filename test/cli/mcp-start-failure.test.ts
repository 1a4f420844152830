import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../../src/testing/harness.js';
import { assertBuilt, CLI, REPO } from './support.js';

const tempDir = tempDirs();

const textOf = (result: Awaited<ReturnType<Client['callTool']>>): string =>
  (result.content as { text?: string }[]).map((content) => content.text ?? '').join('\n');

async function exitOf(pid: number): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 20) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the server (pid ${pid}) did not exit`);
}

describe('sessionfs mcp whose session cannot start tells the client why', () => {
  beforeAll(() => assertBuilt());

  it('--session NAME --mount WRONGPATH: every call, and a log message, say why (no host path); the server exits once the client leaves', async () => {
    const hostDir = tempDir();
    await mkdir(join(hostDir, 'project'));
    await writeFile(join(hostDir, 'project', 'a.txt'), 'a\n');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        CLI,
        'mcp',
        '--session',
        'work',
        '--store-dir',
        join(hostDir, 'store'),
        '--mount',
        join(hostDir, 'missing'),
        '--allow',
        hostDir,
      ],
      cwd: REPO,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'start-failure-test', version: '1.0.0' });
    const logged: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logged.push(notification.params));
    await client.connect(transport);
    const pid = transport.pid;
    if (pid === null) throw new Error('the server has no pid');
    try {
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'missing/a.txt' } });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toMatch(/^the session could not start: .*the host path does not exist or cannot be read\. No tool call can run/);
      // Still there past the time a run without a client is given, and every tool says the same.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const diff = await client.callTool({ name: 'diff', arguments: {} });
      expect(diff.isError).toBe(true);
      expect(textOf(diff)).toBe(textOf(read));
      expect(logged.filter((message) => message.level === 'error')).toEqual([{ level: 'error', logger: 'sessionfs', data: textOf(read) }]);
      for (const text of [textOf(read), JSON.stringify(logged)]) expect(text).not.toContain(hostDir);
    } finally {
      await client.close();
    }
    await exitOf(pid);
    expect(stderr).toMatch(/^sessionfs: could not start the session: .*does not exist/m);
    expect(stderr).not.toContain(hostDir);
  }, 30_000);
});
