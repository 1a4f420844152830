#!/usr/bin/env node
// Per-call cost over MCP: reading N files one call at a time and writing N files, through the official SDK
// client on an in-memory transport, on the memory and host backends, side by side with a baseline server
// in the same run. The comparison is the official filesystem server
// (@modelcontextprotocol/server-filesystem), which is not a dependency: the baseline is a minimal SDK server
// answering read_file/write_file with node:fs directly, the floor any MCP filesystem server pays. Prints one JSON document: medians in ms and ratios (ours / baseline).
// Usage: node bench/mcp-calls.mjs [files]   (after `npm run build`)
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createMcpServer, createSession } from '../dist/src/index.js';
import { median, round } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 1000);
const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-mcp-')));
const source = join(scratch, 'project');
const names = Array.from({ length: FILES }, (_, i) => `pkg${Math.floor(i / 100)}/file${i}.ts`);
for (const [i, name] of names.entries()) {
  fs.mkdirSync(join(source, name, '..'), { recursive: true });
  fs.writeFileSync(join(source, name), `export const value${i} = ${i};\n`.repeat(20));
}

async function connect(server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

/** Median ms per call of `call(i)` over every file, after a warm-up of 20 calls. */
async function perCall(call) {
  for (let i = 0; i < 20; i += 1) await call(i % FILES);
  const samples = [];
  for (let i = 0; i < FILES; i += 1) {
    const start = performance.now();
    const result = await call(i);
    samples.push(performance.now() - start);
    if (result.isError) throw new Error(JSON.stringify(result.content));
  }
  return round(median(samples), 3);
}

async function ours(backend) {
  const started = performance.now();
  const session = await createSession({ backend, mounts: [{ hostPath: source, mountPath: 'project' }], allowedHostRoots: [scratch] });
  const client = await connect(await createMcpServer(session));
  const startMs = round(performance.now() - started);
  try {
    const readMs = await perCall((i) => client.callTool({ name: 'read_file', arguments: { path: `project/${names[i]}` } }));
    const writeMs = await perCall((i) =>
      client.callTool({ name: 'write_file', arguments: { path: `out/${names[i]}`, content: `export const written = ${i};\n` } }),
    );
    return { startMs, readMs, writeMs };
  } finally {
    await client.close();
    await session.dispose();
  }
}

/** The floor: an SDK server whose tools are one node:fs call each (no validation beyond zod, no sandbox). */
async function baseline() {
  const root = join(source);
  const server = new McpServer({ name: 'baseline', version: '1.0.0' });
  server.registerTool('read_file', { inputSchema: { path: z.string() } }, async ({ path }) => ({
    content: [{ type: 'text', text: await fs.promises.readFile(join(root, path), 'utf8') }],
  }));
  server.registerTool('write_file', { inputSchema: { path: z.string(), content: z.string() } }, async ({ path, content }) => {
    await fs.promises.mkdir(join(root, path, '..'), { recursive: true });
    await fs.promises.writeFile(join(root, path), content);
    return { content: [{ type: 'text', text: `wrote ${path}` }] };
  });
  const started = performance.now();
  const client = await connect(server);
  const startMs = round(performance.now() - started);
  try {
    const readMs = await perCall((i) => client.callTool({ name: 'read_file', arguments: { path: names[i] } }));
    const writeMs = await perCall((i) =>
      client.callTool({ name: 'write_file', arguments: { path: `out/${names[i]}`, content: `export const written = ${i};\n` } }),
    );
    return { startMs, readMs, writeMs };
  } finally {
    await client.close();
  }
}

try {
  const base = await baseline();
  const memory = await ours('memory');
  const host = await ours('host');
  const ratio = (a, b) => round(a / b, 2);
  console.log(
    JSON.stringify(
      {
        bench: 'mcp-calls',
        files: FILES,
        baseline: 'minimal SDK server with node:fs (@modelcontextprotocol/server-filesystem is not a dependency)',
        baselineMs: base,
        memoryMs: memory,
        hostMs: host,
        ratios: {
          memoryRead: ratio(memory.readMs, base.readMs),
          memoryWrite: ratio(memory.writeMs, base.writeMs),
          hostRead: ratio(host.readMs, base.readMs),
          hostWrite: ratio(host.writeMs, base.writeMs),
        },
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
