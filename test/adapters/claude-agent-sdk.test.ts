import { query, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeAgentSdkServer } from '../../src/adapters/claude-agent-sdk.js';
import { createSession } from '../../src/index.js';
import { anthropicStream, startFakeModel, type ModelRequest } from '../support/fake-model-server.js';

const GREET = 'export const greet = (name: string) => `Hello, ${name}!`;\n';

describe('sessionfs/claude-agent-sdk: the in-process MCP server', () => {
  it('serves the tools over MCP: nulls read as absent, a failed call is rolled back and answered isError', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('src/greet.ts', GREET);
    const server = await claudeAgentSdkServer(session);
    expect(server).toMatchObject({ type: 'sdk', name: 'sessionfs' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.instance.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['read_file', 'edit_file', 'write_file', 'snapshot', 'restore', 'diff']));

    const read = await client.callTool({ name: 'read_file', arguments: { path: 'src/greet.ts', offset: null, limit: null } });
    expect(read.isError).toBe(false);
    expect(JSON.stringify(read.content)).toContain('Hello, ${name}!');
    const edit = await client.callTool({
      name: 'edit_file',
      arguments: { path: 'src/greet.ts', old_string: 'Bonjour', new_string: 'Hi', force: true },
    });
    expect(edit).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('unknown parameter "force"') }] });
    const failing = await client.callTool({
      name: 'edit_file',
      arguments: { path: 'src/greet.ts', old_string: 'Bonjour', new_string: 'Hi' },
    });
    expect(failing).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/^Error \[/) }] });
    expect(session.calls.map((r) => [r.tool, r.result.success, r.result.rolledBack])).toEqual([
      ['read_file', true, false],
      ['edit_file', false, false],
      ['edit_file', false, true],
    ]);
    await client.close();
  });
});

/** The tool results the model was sent in its last user message. */
function toolResults(request: ModelRequest): { content: string; is_error?: boolean }[] {
  const messages = request.body.messages as { role: string; content: string | { type: string; content?: unknown; is_error?: boolean }[] }[];
  const last = messages.at(-1);
  if (last === undefined || typeof last.content === 'string') return [];
  return last.content
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({ content: JSON.stringify(block.content), ...(block.is_error === undefined ? {} : { is_error: block.is_error }) }));
}

describe('query() of the Claude Agent SDK with sessionfs tools, against a fake Messages API', () => {
  it('reads, fails an edit (rolled back, the model sees the error), fixes it, answers', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('src/greet.ts', GREET);
    const server = await claudeAgentSdkServer(session);
    const steps = [
      { type: 'tool_use', id: 'toolu_read', name: 'mcp__sessionfs__read_file', input: { path: 'src/greet.ts' } },
      {
        type: 'tool_use',
        id: 'toolu_edit1',
        name: 'mcp__sessionfs__edit_file',
        input: { path: 'src/greet.ts', old_string: 'Bonjour', new_string: 'Hi' },
      },
      {
        type: 'tool_use',
        id: 'toolu_edit2',
        name: 'mcp__sessionfs__edit_file',
        input: { path: 'src/greet.ts', old_string: 'Hello', new_string: 'Hi' },
      },
      { type: 'text', text: 'greet now says Hi.' },
    ] as const;
    // The conversation decides the step (the CLI may make side requests that carry no sessionfs tools).
    const seen: ModelRequest[] = [];
    await using model = await startFakeModel(
      (path) => path.startsWith('/v1/messages') && !path.includes('count_tokens'),
      (request) => {
        const offersTools = JSON.stringify(request.body.tools ?? []).includes('mcp__sessionfs__read_file');
        if (!offersTools) return anthropicStream('msg_side', String(request.body.model), [{ type: 'text', text: 'ok' }]);
        seen.push(request);
        return anthropicStream(`msg_${seen.length}`, String(request.body.model), [steps[Math.min(seen.length - 1, steps.length - 1)]!]);
      },
    );
    const home = await mkdtemp(join(tmpdir(), 'sessionfs-claude-home-'));
    const messages: SDKMessage[] = [];
    try {
      for await (const message of query({
        prompt: 'Make greet say Hi',
        options: {
          cwd: home,
          mcpServers: { sessionfs: server },
          tools: [],
          allowedTools: ['mcp__sessionfs'],
          maxTurns: 8,
          env: {
            PATH: process.env.PATH,
            HOME: home,
            CLAUDE_CONFIG_DIR: join(home, '.claude'),
            ANTHROPIC_BASE_URL: model.url,
            ANTHROPIC_API_KEY: 'sk-offline',
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            DISABLE_TELEMETRY: '1',
            DISABLE_AUTOUPDATER: '1',
          },
        },
      })) {
        messages.push(message);
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }

    expect(seen).toHaveLength(4);
    expect(toolResults(seen[1]!)).toEqual([{ content: expect.stringContaining('Hello, ${name}!') }]);
    expect(toolResults(seen[2]!)).toEqual([
      { content: expect.stringContaining('old_string was not found in src/greet.ts'), is_error: true },
    ]);
    expect(toolResults(seen[2]!)[0]?.content).toContain('This call was rolled back');
    expect(toolResults(seen[3]!)[0]?.is_error).not.toBe(true);
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'greet now says Hi.' });
    expect((await session.filesystem.read('src/greet.ts')).content).toBe('export const greet = (name: string) => `Hi, ${name}!`;');
    expect(session.calls.map((r) => [r.tool, r.result.success, r.result.rolledBack])).toEqual([
      ['read_file', true, false],
      ['edit_file', false, true],
      ['edit_file', true, false],
    ]);
  }, 60_000);
});
