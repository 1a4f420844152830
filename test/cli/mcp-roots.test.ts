import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp-server.js';
import { createSession } from '../../src/session/index.js';
import { tempDirs } from '../../src/testing/harness.js';

interface Connected {
  client: Client;
  logs: string[];
  toolListChanges: number;
  setRoots(uris: string[]): Promise<void>;
  call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
}

describe("MCP roots: the client's roots narrow the workspace, never widen it", () => {
  const tempDir = tempDirs();
  let scratch: string;
  let project: string;
  let outside: string;
  const cleanup: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    scratch = tempDir('sessionfs-roots-');
    outside = tempDir('sessionfs-roots-outside-');
    project = join(scratch, 'project');
    await mkdir(join(project, 'src'), { recursive: true });
    await mkdir(join(project, 'docs'), { recursive: true });
    await writeFile(join(project, 'src/app.ts'), 'export const app = 1;\n');
    await writeFile(join(project, 'docs/guide.md'), 'export const guide = 1;\n');
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  /** A server on a memory workspace with `project` mounted, and a client offering `roots` (or not). */
  async function connect(options: { roots?: string[]; shell?: boolean }): Promise<Connected> {
    const session = await createSession({
      backend: 'memory',
      sources: [{ hostPath: project, path: 'project' }],
      allowedHostRoots: [scratch],
    });
    const server = await createMcpServer(session, {
      redact: [scratch],
      hostAreas: [{ hostPath: project, workspacePath: 'project' }, { hostPath: scratch }],
      ...(options.shell === true ? { tools: { shell: true } } : {}),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    let roots = options.roots;
    const client = new Client(
      { name: 'sessionfs-test', version: '1.0.0' },
      { capabilities: roots === undefined ? {} : { roots: { listChanged: true } } },
    );
    const connected: Connected = {
      client,
      logs: [],
      toolListChanges: 0,
      async setRoots(uris) {
        roots = uris;
        await client.sendRootsListChanged();
      },
      async call(name, args) {
        const result = await client.callTool({ name, arguments: args });
        const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
        return { text, isError: result.isError === true };
      },
    };
    if (roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: (roots ?? []).map((uri) => ({ uri })) }));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void connected.logs.push(String(n.params.data)));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (connected.toolListChanges += 1));
    await client.connect(clientSide);
    cleanup.push(
      () => session.dispose(),
      () => client.close(),
    );
    return connected;
  }

  const uri = (path: string): string => pathToFileURL(path).href;

  it('limits every tool to the workspace paths a root inside a mount covers', async () => {
    const { call, logs } = await connect({ roots: [uri(join(project, 'src'))] });
    expect(await call('read_file', { path: 'project/src/app.ts' })).toMatchObject({ isError: false });
    const refused = await call('read_file', { path: 'project/docs/guide.md' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('outside the roots the MCP client gave (project/src)');
    expect(await call('write_file', { path: 'project/src/new.ts', content: 'x\n' })).toMatchObject({ isError: false });
    expect((await call('write_file', { path: 'notes.md', content: 'x\n' })).isError).toBe(true);
    expect((await call('move', { from: 'project/src/new.ts', to: 'project/docs/new.ts' })).isError).toBe(true);
    const found = await call('grep', { pattern: 'export const' });
    expect(found.text).toContain('project/src/app.ts');
    expect(found.text).not.toContain('guide.md');
    const listed = await call('list_directory', { path: 'project' });
    expect(listed.text).toContain('src');
    expect(listed.text).not.toContain('docs');
    expect(logs).toEqual([`root ${uri(join(project, 'src'))} accepted: tools may use project/src`]);
  });

  it('refuses a root outside what the server was started with, saying so without our host paths, and keeps the workspace', async () => {
    const { call, logs } = await connect({ roots: [uri(outside), uri(join(outside, 'missing'))] });
    expect(await call('read_file', { path: 'project/docs/guide.md' })).toMatchObject({ isError: false });
    expect(logs).toEqual([
      `root ${uri(outside)} refused: outside the directories this server was started with`,
      `root ${uri(join(outside, 'missing'))} refused: no such directory on the machine this server runs on`,
      'no root was accepted: the tools keep the whole workspace the server was started with',
    ]);
    for (const line of logs) expect(line).not.toContain(scratch);
  });

  it('takes a root holding the mount as the whole mount, and one inside an allowed root with nothing mounted as refused', async () => {
    const other = join(scratch, 'other');
    await mkdir(other);
    const { call, logs } = await connect({ roots: [uri(scratch), uri(other)] });
    await call('stat', { path: 'project' });
    expect(logs[0]).toBe(`root ${uri(scratch)} accepted: tools may use project`);
    expect(logs[1]).toBe(`root ${uri(other)} refused: it holds no part of this workspace (nothing from it is mounted)`);
    expect((await call('read_file', { path: 'project/docs/guide.md' })).isError).toBe(false);
    expect((await call('write_file', { path: 'scratch.md', content: 'x\n' })).isError).toBe(true);
  });

  it('asks again on roots/list_changed, and withdraws the shell (tools/list_changed) while roots narrow the workspace', async () => {
    const connected = await connect({ roots: [], shell: true });
    const { client, call } = connected;
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect(await names()).toContain('bash');
    await connected.setRoots([uri(join(project, 'docs'))]);
    expect(await names()).not.toContain('bash');
    expect(connected.toolListChanges).toBe(1);
    expect((await call('read_file', { path: 'project/src/app.ts' })).isError).toBe(true);
    expect((await call('bash', { command: 'cat project/src/app.ts' })).isError).toBe(true);
    await connected.setRoots([uri(project)]);
    expect((await call('read_file', { path: 'project/src/app.ts' })).isError).toBe(false);
    await connected.setRoots([]);
    expect(await names()).toContain('bash');
    expect(connected.toolListChanges).toBe(2);
  });

  it('asks nothing of a client without the roots capability, and declares listChanged false when no tool can come and go', async () => {
    const { client, call, logs } = await connect({});
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(false);
    expect((await call('write_file', { path: 'anywhere.md', content: 'x\n' })).isError).toBe(false);
    expect(logs).toEqual([]);
  });
});
