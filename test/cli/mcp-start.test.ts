import { describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp-server.js';
import { createSession } from '../../src/session/index.js';
import { connectInMemory } from './support.js';

describe('the MCP server snapshots the starting state while it answers the first calls', () => {
  for (const backend of ['memory', 'host'] as const) {
    it(`a write sent at once still finds "initial" as the server started (${backend})`, async () => {
      await using session = await createSession({ backend, rollback: 'journal' });
      const files = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`src/f${i}.txt`, `file ${i}\n`]));
      for (const [path, content] of Object.entries(files)) await session.filesystem.write(path, content);
      const server = await createMcpServer(session);
      const client = await connectInMemory(server);
      try {
        const [read, written] = await Promise.all([
          client.callTool({ name: 'read_file', arguments: { path: 'src/f1.txt' } }),
          client.callTool({ name: 'write_file', arguments: { path: 'src/f0.txt', content: 'changed\n' } }),
        ]);
        expect(read.isError).toBe(false);
        expect(written.isError).toBe(false);
        const diff = await client.callTool({ name: 'diff', arguments: {} });
        expect((diff.content as { text: string }[])[0]?.text).toContain('M src/f0.txt');
        expect((await client.callTool({ name: 'restore', arguments: { id: 'initial' } })).isError).toBe(false);
        expect((await session.filesystem.read('src/f0.txt')).content).toMatch(/^file 0\n?$/);
      } finally {
        await client.close();
      }
    });
  }
});
