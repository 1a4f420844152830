import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { HydrationFeed } from '../../src/cli/mcp-hydration.js';
import { buildMcpServer } from '../../src/cli/mcp-server.js';
import { createSession } from '../../src/session/index.js';
import type { Session } from '../../src/session/types.js';
import { tempDirs } from '../../src/testing/harness.js';
import { assertBuilt, CLI, REPO } from './support.js';

const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { text: string }[]).map((c) => c.text).join('\n');

/** Collects the `notifications/message` lines a client is sent. */
function logLines(client: Client): string[] {
  const lines: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    if (notification.params.logger === 'sessionfs.hydration') lines.push(String(notification.params.data));
  });
  return lines;
}

/** The SDK client over an in-memory transport, collecting log lines from the start. */
async function connectWithLogs(server: Server): Promise<{ client: Client; lines: string[] }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'hydration-test', version: '1.0.0' });
  const lines = logLines(client);
  await client.connect(clientSide);
  return { client, lines };
}

const until = async (condition: () => boolean): Promise<void> => {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 10_000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('the MCP server tells the client how hydration goes', () => {
  it('a call carrying a progress token gets increasing progress while it waits; the log says what was skipped', async () => {
    const feed = new HydrationFeed();
    let start!: (session: Session) => void;
    const ready = new Promise<Session>((resolve) => (start = resolve));
    const { server } = await buildMcpServer({ ready, readOnly: false, hydration: feed });
    feed.report({ phase: 'write', done: 10, files: 10, bytes: 100, path: 'big/a' });
    const { client, lines } = await connectWithLogs(server);
    try {
      await until(() => lines.length > 0);
      expect(lines[0]).toBe('hydrating the mounts: 10 files, 100 B so far');
      const progress: Progress[] = [];
      const read = client.callTool({ name: 'read_file', arguments: { path: 'big/a.txt' } }, undefined, {
        onprogress: (update) => progress.push(update),
      });
      await until(() => progress.length === 1);
      for (const files of [20, 20, 30]) {
        // Past the throttle: each new count is sent, a repeated one is not (progress must increase).
        await new Promise((resolve) => setTimeout(resolve, 120));
        feed.report({ phase: 'write', done: files, files, bytes: files * 10, path: 'big/a' });
      }
      const session = await createSession({ backend: 'memory' });
      await session.filesystem.write('big/a.txt', 'hydrated\n');
      feed.finish({ files: 31, bytes: 310, skipped: [{ path: 'big/node_modules', reason: 'ignored by .gitignore (…)' }] });
      start(session);
      const result = await read;
      expect(text(result)).toContain('hydrated');
      expect(progress.map((p) => p.progress)).toEqual([10, 20, 30, 31]);
      expect(progress.at(-1)).toMatchObject({ total: 31, message: 'hydrated: 31 files, 310 B' });
      await until(() => lines.length === 2);
      expect(lines[1]).toBe('hydrated the mounts: 31 files, 310 B; skipped 1:\n  big/node_modules (ignored by .gitignore (…))');
      // Once the session has started, a call is answered without a word of progress.
      const again: Progress[] = [];
      await client.callTool({ name: 'read_file', arguments: { path: 'big/a.txt' } }, undefined, { onprogress: (p) => again.push(p) });
      expect(again).toEqual([]);
      await session.dispose();
    } finally {
      await client.close();
    }
  });

  it('a client that connects after hydration ended is told how it ended', async () => {
    const feed = new HydrationFeed();
    const session = await createSession({ backend: 'memory' });
    feed.finish({ files: 2, bytes: 20, skipped: [] });
    const { server } = await buildMcpServer({ ready: Promise.resolve(session), readOnly: false, hydration: feed });
    const { client, lines } = await connectWithLogs(server);
    try {
      await until(() => lines.length === 1);
      expect(lines).toEqual(['hydrated the mounts: 2 files, 20 B; nothing skipped']);
    } finally {
      await client.close();
      await session.dispose();
    }
  });
});

describe('sessionfs mcp over stdio with a 20,000-file mount', () => {
  const tempDir = tempDirs({ prefix: 'sessionfs-mcp-hydration-', until: 'file' });
  let base: string;
  const FILES = 20_000;
  beforeAll(() => {
    assertBuilt();
    base = tempDir();
    const project = join(base, 'project');
    const line = 'x'.repeat(200);
    for (let dir = 0; dir < FILES / 100; dir += 1) {
      mkdirSync(join(project, `src/d${dir}`), { recursive: true });
      for (let file = 0; file < 100; file += 1) writeFileSync(join(project, `src/d${dir}/f${file}.txt`), `${dir}/${file} ${line}\n`);
    }
    mkdirSync(join(project, 'node_modules/dep'), { recursive: true });
    writeFileSync(join(project, 'node_modules/dep/index.js'), 'ignored\n');
    writeFileSync(join(project, '.gitignore'), 'node_modules/\n');
    expect(spawnSync('git', ['init', '-q', project]).status).toBe(0);
  }, 120_000);

  it('answers initialize at once, sends progress to the first call and log lines, and names what it skipped', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--backend', 'memory', '--mount', join(base, 'project'), '--allow', base],
      cwd: REPO,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'hydration-test', version: '1.0.0' });
    const lines = logLines(client);
    await client.connect(transport);
    try {
      const progress: Progress[] = [];
      const result = await client.callTool({ name: 'read_file', arguments: { path: 'project/src/d7/f3.txt' } }, undefined, {
        onprogress: (update) => progress.push(update),
        resetTimeoutOnProgress: true,
      });
      expect(text(result)).toContain('7/3 xxx');
      // The first call waited for the hydration, told how it went: strictly increasing counts, the last one the total.
      expect(progress.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < progress.length; i += 1) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
      expect(progress.at(-1)).toMatchObject({ progress: FILES + 1, total: FILES + 1 });
      // Initialize was answered while the copy ran: the first call found it under way (no clock involved).
      expect(progress[0]!.progress).toBeLessThan(FILES + 1);
      await until(() => lines.some((line) => line.startsWith('hydrated the mounts')));
      const closing = lines.find((line) => line.startsWith('hydrated the mounts')) ?? '';
      expect(closing).toContain(`hydrated the mounts: ${(FILES + 1).toLocaleString('en-US')} files`);
      expect(closing).toContain('\n  project/.git (version-control directory');
      expect(closing).toContain('\n  project/node_modules (ignored by .gitignore');
      expect(lines.join('\n')).not.toContain(base);
      const listed = text(
        await client.callTool({ name: 'glob', arguments: { pattern: 'project/node_modules/**', include_ignored: true } }),
      );
      expect(listed).not.toContain('index.js');
    } finally {
      await client.close();
    }
  }, 120_000);
});
