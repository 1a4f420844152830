import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp-server.js';
import { createSession } from '../../src/session/index.js';
import type { HydratedSession } from '../../src/session/index.js';
import { WORKSPACE_TOOL_NAMES } from '../../src/tools/index.js';
import { PNG, WAV } from '../tools/helpers.js';
import { SESSION_KINDS } from '../support/backends.js';

describe('the MCP server seen by the official SDK client (in-memory transport)', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function connect(backend: 'memory' | 'host'): Promise<{ client: Client; session: HydratedSession }> {
    const session = await createSession({ backend });
    const server = await createMcpServer(session);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'sessionfs-test', version: '1.0.0' });
    await client.connect(clientSide);
    cleanup.push(
      () => session.dispose(),
      () => client.close(),
    );
    return { client, session };
  }

  for (const backend of SESSION_KINDS) {
    it(`returns read_media results as image and audio content blocks, bytes intact (${backend})`, async () => {
      const { client, session } = await connect(backend);
      await session.filesystem.writeBytes('logo.png', PNG);
      await session.filesystem.writeBytes('beep.wav', WAV);
      const image = await client.callTool({ name: 'read_media', arguments: { path: 'logo.png' } });
      expect(image.isError).toBe(false);
      const [text, block] = image.content as [{ type: string; text: string }, { type: string; data: string; mimeType: string }];
      expect(text).toEqual({ type: 'text', text: `Image logo.png (image/png, ${PNG.length} bytes).` });
      expect(block).toMatchObject({ type: 'image', mimeType: 'image/png' });
      expect(Buffer.from(block.data, 'base64')).toEqual(PNG);
      const audio = await client.callTool({ name: 'read_media', arguments: { path: 'beep.wav' } });
      expect((audio.content as unknown[])[1]).toEqual({ type: 'audio', mimeType: 'audio/wav', data: WAV.toString('base64') });
      const refused = await client.callTool({ name: 'read_media', arguments: { path: 'nothing.png' } });
      expect(refused.isError).toBe(true);
      expect(refused.content).toHaveLength(1);
    });
  }

  for (const backend of ['memory', 'host'] as const) {
    it(`returns send_file results as embedded resources for the user, pinned bytes intact (${backend})`, async () => {
      const { client, session } = await connect(backend);
      await session.filesystem.write('out/summary ü.md', '# Done\n');
      await session.filesystem.writeBytes('chart.png', PNG);
      const sent = await client.callTool({ name: 'send_file', arguments: { path: 'out/summary ü.md', description: 'summary' } });
      expect(sent.isError).toBe(false);
      expect(sent.content).toEqual([
        { type: 'text', text: 'Sent out/summary ü.md to the user as output-1 (7 B, text/markdown).' },
        {
          type: 'resource',
          resource: { uri: 'sessionfs://outputs/output-1/out/summary%20%C3%BC.md', mimeType: 'text/markdown', text: '# Done\n' },
          annotations: { audience: ['user'] },
        },
      ]);
      const image = await client.callTool({ name: 'send_file', arguments: { path: 'chart.png' } });
      await session.filesystem.writeBytes('chart.png', Uint8Array.from([1, 2, 3]));
      const block = (image.content as { resource: { uri: string; mimeType: string; blob: string } }[])[1]!;
      expect(block.resource).toMatchObject({ uri: 'sessionfs://outputs/output-2/chart.png', mimeType: 'image/png' });
      expect(Buffer.from(block.resource.blob, 'base64')).toEqual(PNG);
      expect(Buffer.from(session.readOutput('output-2'))).toEqual(PNG);
      if (backend === 'host') expect(JSON.stringify([sent.content, image.content])).not.toContain(session.filesystem.root);
      const missing = await client.callTool({ name: 'send_file', arguments: { path: 'nothing.txt' } });
      expect(missing.isError).toBe(true);
      expect(missing.content).toHaveLength(1);
    });
  }

  it('lists every tool with its annotations', async () => {
    const { client } = await connect('memory');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...WORKSPACE_TOOL_NAMES, 'snapshot', 'restore', 'diff', 'export_patch']);
    for (const tool of tools) {
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
    }
    const hints = new Map(tools.map((t) => [t.name, t.annotations]));
    expect(hints.get('read_many_files')).toMatchObject({ readOnlyHint: true });
    expect(hints.get('diff')).toMatchObject({ readOnlyHint: true });
    expect(hints.get('restore')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints.get('edit_file')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  });
});
