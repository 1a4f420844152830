import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp-server.js';
import { createSession } from '../../src/session/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mcp server review', () => {
  it('a call the client cancels is rolled back, not completed behind its back', async () => {
    await using session = await createSession({ backend: 'memory' });
    // A slow workspace: each write lands 100 ms after it is asked for.
    const real = session.filesystem;
    const write = real.write;
    (real as unknown as Record<string, unknown>).write = async (...args: Parameters<typeof write>) => {
      await sleep(100);
      return write.apply(real, args);
    };
    const server = await createMcpServer(session);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'review', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const controller = new AbortController();
      const call = client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }, undefined, { signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      await expect(call).rejects.toThrow();
      await sleep(250);
      // Reproduced: x.txt was written although the client had cancelled the call.
      expect(await real.exists('x.txt')).toBe(false);
      expect(session.history.at(-1)?.result).toMatchObject({ rolledBack: true, code: 'EABORT' });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
