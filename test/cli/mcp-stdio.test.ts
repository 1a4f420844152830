import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildMcpServer } from '../../src/cli/mcp-server.js';
import { McpStdioTransport, type DirectLane, type ToolCallHandler } from '../../src/cli/mcp-stdio.js';
import { createSession } from '../../src/session/index.js';
import { connectInMemory, slowWrites } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Both ends of a stdio connection in one process: what the client writes, the server reads, and back. */
function pipes() {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const lines: unknown[] = [];
  let pending = '';
  toClient.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
      lines.push(JSON.parse(pending.slice(0, end)));
      pending = pending.slice(end + 1);
    }
  });
  const until = async (count: number): Promise<unknown[]> => {
    for (let waited = 0; lines.length < count && waited < 5000; waited += 5) await sleep(5);
    return lines;
  };
  return { toServer, toClient, lines, until, send: (message: unknown) => toServer.write(`${JSON.stringify(message)}\n`) };
}

/** The official SDK client over the pipes (the SDK's stdio transport works either way round). */
async function clientOver(ends: ReturnType<typeof pipes>): Promise<Client> {
  const client = new Client({ name: 'lane-test', version: '1.0.0' });
  await client.connect(new StdioServerTransport(ends.toClient, ends.toServer));
  return client;
}

const call = (id: number | string, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('McpStdioTransport: tools/call through the direct lane', () => {
  it('answers a call exactly as the SDK path does, with a result that passes the SDK schema', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('notes.txt', 'one\r\ntwo\r\n');
    const { server, lane } = await buildMcpServer(session);
    const ends = pipes();
    await server.connect(new McpStdioTransport(lane, ends.toServer, ends.toClient));
    const reference = await connectInMemory((await buildMcpServer(session)).server);
    const client = await clientOver(ends);
    try {
      for (const [name, args] of [
        ['read_file', { path: 'notes.txt' }],
        ['read_file', { path: 'missing.txt' }],
        ['read_file', { path: 'notes.txt', bogus: 1 }],
        ['no_such_tool', {}],
      ] as const) {
        const direct = await client.callTool({ name, arguments: args });
        expect(CallToolResultSchema.safeParse(direct).success).toBe(true);
        expect(direct).toEqual(await reference.callTool({ name, arguments: args }));
      }
    } finally {
      await client.close();
      await reference.close();
      await server.close();
    }
  });

  it('a call the client cancels is aborted and rolled back, and no response is sent for it', async () => {
    await using session = await createSession({ backend: 'memory' });
    const real = session.filesystem;
    slowWrites(session, 100);
    const { server, lane } = await buildMcpServer(session);
    const ends = pipes();
    await server.connect(new McpStdioTransport(lane, ends.toServer, ends.toClient));
    try {
      ends.send({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      await ends.until(1);
      ends.send(call(7, 'write_file', { path: 'x.txt', content: 'x' }));
      await sleep(20);
      ends.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'user stop' } });
      ends.send(call(8, 'read_file', { path: 'x.txt' }));
      await ends.until(2);
      await sleep(250);
      expect(ends.lines.map((line) => (line as { id?: unknown }).id)).toEqual([0, 8]);
      expect(await real.exists('x.txt')).toBe(false);
      const written = session.calls.find((entry) => entry.tool === 'write_file');
      expect(written?.result).toMatchObject({ rolledBack: true, code: 'ABORT_ERR' });
    } finally {
      await server.close();
    }
  });

  it('leaves every message it does not take to the SDK: the same lines get the same answers as over its own transport', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('a.txt', 'a\n');
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      // Arguments that are not an object: the SDK's schema refuses the request.
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: ['a'] } },
      // A key JSON-RPC does not have: not a message for the SDK (reported, not answered).
      { ...call(3, 'read_file', { path: 'a.txt' }), extra: true },
      '{ not json',
      // A related task in _meta, a task: the SDK's business.
      {
        ...call(4, 'read_file', { path: 'a.txt' }),
        params: { name: 'read_file', arguments: { path: 'a.txt' }, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } },
      },
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' }, task: { ttl: 1000 } } },
      { jsonrpc: '2.0', id: 6.5, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } },
      // Taken by the lane: a progress token, an id that is a string.
      {
        jsonrpc: '2.0',
        id: 'seven',
        method: 'tools/call',
        params: { name: 'read_file', arguments: { path: 'a.txt' }, _meta: { progressToken: 3 } },
      },
      call(8, 'list_directory', { path: '.' }),
      // Cancellations the SDK does not act on (a falsy id, a reason that is not a string): neither does the lane.
      call(0, 'read_file', { path: 'a.txt' }),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0 } },
      call(9, 'read_file', { path: 'a.txt' }),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 7 } },
    ];
    const answers = async (transportOver: (ends: ReturnType<typeof pipes>, lane: DirectLane) => Transport) => {
      const { server, lane } = await buildMcpServer(session);
      const ends = pipes();
      const errors: string[] = [];
      await server.connect(transportOver(ends, lane));
      server.onerror = (error) => errors.push(error.name);
      for (const line of lines) ends.toServer.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
      await ends.until(8);
      await sleep(50);
      await server.close();
      const byId = (a: unknown, b: unknown) => String((a as { id: unknown }).id).localeCompare(String((b as { id: unknown }).id));
      return { lines: [...ends.lines].sort(byId), errors: errors.length };
    };
    const ours = await answers((ends, lane) => new McpStdioTransport(lane, ends.toServer, ends.toClient));
    const sdk = await answers((ends) => new StdioServerTransport(ends.toServer, ends.toClient));
    expect(ours).toEqual(sdk);
    expect(ours.lines.map((line) => (line as { id: unknown }).id)).toEqual([0, 1, 2, 4, 5, 8, 9, 'seven']);
    expect(ours.errors).toBeGreaterThanOrEqual(3);
  });
});

describe("McpStdioTransport: a call read with the client's initialized notification", () => {
  const tempDir = tempDirs();
  it("waits for the client's roots, as over the SDK's transport", async () => {
    const scratch = tempDir('sessionfs-lane-roots-');
    const project = join(scratch, 'project');
    mkdirSync(join(project, 'src'), { recursive: true });
    mkdirSync(join(project, 'docs'), { recursive: true });
    writeFileSync(join(project, 'docs/guide.md'), 'SECRET GUIDE\n');
    await using session = await createSession({
      backend: 'memory',
      sources: [{ hostPath: project, path: 'project' }],
      allowedHostRoots: [scratch],
    });
    const answer = async (transportOver: (ends: ReturnType<typeof pipes>, lane: DirectLane) => Transport) => {
      const { server, lane } = await buildMcpServer(session, {
        redact: [scratch],
        hostAreas: [{ hostPath: project, workspacePath: 'project' }, { hostPath: scratch }],
      });
      const ends = pipes();
      await server.connect(transportOver(ends, lane));
      // The client's side: answers the server's roots/list with project/src only.
      ends.toClient.on('data', () => {
        for (const line of ends.lines.splice(0) as { id?: number; method?: string; result?: unknown }[]) {
          if (line.method === 'roots/list')
            ends.send({ jsonrpc: '2.0', id: line.id, result: { roots: [{ uri: pathToFileURL(join(project, 'src')).href }] } });
          else answers.push(line);
        }
      });
      const answers: { id?: number; result?: unknown }[] = [];
      ends.send({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: { roots: { listChanged: true } },
          clientInfo: { name: 't', version: '1' },
        },
      });
      while (!answers.some((line) => line.id === 0)) await sleep(5);
      // One write: the notification and the call arrive in the same chunk.
      ends.toServer.write(
        `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify(call(1, 'read_file', { path: 'project/docs/guide.md' }))}\n`,
      );
      while (!answers.some((line) => line.id === 1)) await sleep(5);
      await server.close();
      return answers.find((line) => line.id === 1)?.result as { isError: boolean; content: { text: string }[] };
    };
    const sdk = await answer((ends) => new StdioServerTransport(ends.toServer, ends.toClient));
    const ours = await answer((ends, lane) => new McpStdioTransport(lane, ends.toServer, ends.toClient));
    expect(sdk.isError).toBe(true);
    expect(ours).toEqual(sdk);
    expect(ours.content[0]?.text).not.toContain('SECRET GUIDE');
  });
});

describe("the client's roots, whatever the chunking", () => {
  const tempDir = tempDirs();
  it('are asked for when initialize, initialized and a call come in one write, and the call waits for them (both transports)', async () => {
    const scratch = tempDir('sessionfs-roots-chunk-');
    const project = join(scratch, 'proj');
    mkdirSync(join(project, 'src'), { recursive: true });
    mkdirSync(join(project, 'secret'), { recursive: true });
    writeFileSync(join(project, 'secret/key.txt'), 'THE KEY\n');
    await using session = await createSession({
      backend: 'memory',
      sources: [{ hostPath: project, path: 'proj' }],
      allowedHostRoots: [scratch],
    });
    const answer = async (transportOver: (ends: ReturnType<typeof pipes>, lane: DirectLane) => Transport) => {
      const { server, lane } = await buildMcpServer(session, {
        redact: [scratch],
        hostAreas: [{ hostPath: project, workspacePath: 'proj' }, { hostPath: scratch }],
      });
      const ends = pipes();
      await server.connect(transportOver(ends, lane));
      const answers: { id?: number; result?: unknown }[] = [];
      let asked = 0;
      ends.toClient.on('data', () => {
        for (const line of ends.lines.splice(0) as { id?: number; method?: string; result?: unknown }[]) {
          if (line.method === 'roots/list') {
            asked += 1;
            ends.send({ jsonrpc: '2.0', id: line.id, result: { roots: [{ uri: pathToFileURL(join(project, 'src')).href }] } });
          } else answers.push(line);
        }
      });
      const initialize = {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: { roots: {} }, clientInfo: { name: 't', version: '1' } },
      };
      ends.toServer.write(
        [initialize, { jsonrpc: '2.0', method: 'notifications/initialized' }, call(1, 'read_file', { path: 'proj/secret/key.txt' })]
          .map((message) => `${JSON.stringify(message)}\n`)
          .join(''),
      );
      while (!answers.some((line) => line.id === 1)) await sleep(5);
      await server.close();
      return { asked, result: answers.find((line) => line.id === 1)?.result as { isError: boolean; content: { text: string }[] } };
    };
    for (const transportOver of [
      (ends: ReturnType<typeof pipes>) => new StdioServerTransport(ends.toServer, ends.toClient),
      (ends: ReturnType<typeof pipes>, lane: DirectLane) => new McpStdioTransport(lane, ends.toServer, ends.toClient),
    ]) {
      const { asked, result } = await answer(transportOver);
      expect(asked).toBe(1);
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toContain('outside the roots the MCP client gave (proj/src)');
    }
  });
});

describe('McpStdioTransport: framing and the call lifecycle', () => {
  /** The transport alone, with `handler` answering every tools/call. */
  async function laneWith(handler: ToolCallHandler) {
    const ends = pipes();
    const transport = new McpStdioTransport({ call: handler, received: () => undefined }, ends.toServer, ends.toClient);
    const messages: unknown[] = [];
    const errors: Error[] = [];
    let closed = 0;
    transport.onmessage = (message) => messages.push(message);
    transport.onerror = (error) => errors.push(error);
    transport.onclose = () => (closed += 1);
    await transport.start();
    return { ends, transport, messages, errors, closed: () => closed };
  }
  const echo: ToolCallHandler = async (params) => ({
    content: [{ type: 'text', text: `${params.name} ${JSON.stringify(params.arguments)}` }],
  });

  it('reads messages split across chunks, several per chunk, and CRLF-terminated', async () => {
    const { ends, messages, errors } = await laneWith(echo);
    const first = JSON.stringify(call(1, 'a', { x: 'é' }));
    const bytes = Buffer.from(
      `${first}\r\n${JSON.stringify(call(2, 'b', {}))}\n${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
    );
    // Cut inside the two-byte "é": a chunk boundary may fall inside a character.
    const cut = bytes.indexOf(Buffer.from('é')) + 1;
    ends.toServer.write(bytes.subarray(0, cut));
    await sleep(5);
    ends.toServer.write(bytes.subarray(cut));
    const lines = await ends.until(2);
    expect(lines).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'a {"x":"é"}' }] } },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'b {}' }] } },
    ]);
    expect(messages).toEqual([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect(errors).toEqual([]);
  });

  it('answers a handler that throws with a JSON-RPC error (its integer code, else internal error)', async () => {
    const { ends } = await laneWith(async (params) => {
      if (params.name === 'coded') throw Object.assign(new Error('refused'), { code: -32001, data: { why: 'x' } });
      if (params.name === 'sync') throw new Error('at once');
      throw new TypeError('broken');
    });
    ends.send(call(1, 'coded', {}));
    ends.send(call(2, 'plain', {}));
    const lines = await ends.until(2);
    expect(lines).toContainEqual({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'refused', data: { why: 'x' } } });
    expect(lines).toContainEqual({ jsonrpc: '2.0', id: 2, error: { code: ErrorCode.InternalError, message: 'broken' } });
  });

  it('closing aborts the calls in flight, answers none of them, and reports the close once', async () => {
    const signals: AbortSignal[] = [];
    const { ends, transport, closed } = await laneWith(
      (_params, signal) =>
        new Promise((resolve) => {
          signals.push(signal);
          signal.addEventListener('abort', () => resolve({ content: [] }));
        }),
    );
    ends.send(call('a', 'slow', {}));
    ends.send(call('b', 'slow', {}));
    while (signals.length < 2) await sleep(1);
    await transport.close();
    await transport.close();
    await sleep(10);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expect(ends.lines).toEqual([]);
    expect(closed()).toBe(1);
    ends.send(call('c', 'slow', {}));
    await sleep(10);
    expect(signals).toHaveLength(2);
  });

  it('a message whose handling throws is reported, a request answered with an internal error, and the next line read', async () => {
    const { ends, transport, errors } = await laneWith(echo);
    transport.onmessage = () => {
      throw new RangeError('Maximum call stack size exceeded');
    };
    ends.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
    ends.send({ jsonrpc: '2.0', id: 6, result: {} });
    ends.send(call(7, 'a', {}));
    const lines = await ends.until(2);
    expect(lines).toContainEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: ErrorCode.InternalError, message: 'the server could not handle this request' },
    });
    expect(lines).toContainEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'a {}' }] } });
    expect(lines).toHaveLength(2);
    expect(errors.map((error) => error.name)).toEqual(['RangeError', 'RangeError']);
  });

  it('a client that stops reading (an error on stdout) closes the connection; later answers are refused, not thrown', async () => {
    const { ends, transport, errors, closed } = await laneWith(echo);
    ends.toClient.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await sleep(5);
    expect(closed()).toBe(1);
    expect(errors.map((error) => error.message)).toEqual(['write EPIPE']);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, result: {} })).rejects.toThrow(/connection is closed/);
  });

  it('a message longer than the buffer allows ends the connection with an error', async () => {
    const { ends, errors, closed } = await laneWith(echo);
    ends.toServer.write(Buffer.alloc(10 * 1024 * 1024 + 1, 0x20));
    await sleep(10);
    expect(errors.map((error) => error.message)).toEqual([expect.stringContaining('maximum')]);
    expect(closed()).toBe(1);
  });
});
