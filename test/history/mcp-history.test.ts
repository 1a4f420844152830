import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, REPO } from '../cli/support.js';

const text = (result: Awaited<ReturnType<Client['callTool']>>): string =>
  (result.content as { text: string }[]).map((content) => content.text).join('\n');

async function connect(extra: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...extra], cwd: REPO, stderr: 'pipe' });
  const client = new Client({ name: 'sessionfs-history-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('sessionfs mcp --history-tools', () => {
  beforeAll(() => assertBuilt());

  it('serves history, undo and redo: each call a turn, undone and redone by the model', async () => {
    const client = await connect(['--history-tools']);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['history', 'undo', 'redo']));
      expect(text(await client.callTool({ name: 'history', arguments: {} }))).toBe('No operations yet.');
      const nothing = await client.callTool({ name: 'undo', arguments: {} });
      expect(nothing.isError).toBe(true);
      expect(text(nothing)).toMatch(/^Error \[EINVAL\]: .*no turn left to undo/);

      await client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'one\n' } });
      await client.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'two\n' } });
      const history = text(await client.callTool({ name: 'history', arguments: {} }));
      expect(history).toContain('turn-1\n  op-1 model write_file path="a.txt" content=<4 chars, 2 lines> → A a.txt');
      expect(history).toContain('turn-2\n  op-2 model write_file path="b.txt" content=<4 chars, 2 lines> → A b.txt');
      expect(history).not.toContain('one');

      const undone = await client.callTool({ name: 'undo', arguments: {} });
      expect(text(undone)).toBe('Undid turn-2. D b.txt');
      expect((await client.callTool({ name: 'read_file', arguments: { path: 'b.txt' } })).isError).toBe(true);
      expect(text(await client.callTool({ name: 'history', arguments: { turns: 3 } }))).toMatch(
        /turn-2 \[undone\][\s\S]*turn-3 \[undo\]\n {2}op-3 model undo undo turn-2 → D b.txt/,
      );
      expect(text(await client.callTool({ name: 'redo', arguments: {} }))).toBe('Redid turn-2. A b.txt');
      expect(text(await client.callTool({ name: 'read_file', arguments: { path: 'b.txt' } }))).toContain('two');
      const bad = await client.callTool({ name: 'redo', arguments: { turn: 1 } });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toMatch(/^Error \[EINVAL\]: invalid parameters for redo/);
      const again = await client.callTool({ name: 'redo', arguments: {} });
      expect(text(again)).toMatch(/^Error \[EINVAL\]: .*nothing undone to redo/);
    } finally {
      await client.close();
    }
  });

  it('is opt-in: without the flag none of the three is listed', async () => {
    const client = await connect([]);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names.filter((name) => ['history', 'undo', 'redo'].includes(name))).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
