#!/usr/bin/env node
// Per-call cost and start time over MCP, side by side in one run with the official filesystem server
// (@modelcontextprotocol/server-filesystem), every server a child process driven by the official SDK client
// over stdio, on one tree: the first 10,000 files of this project's node_modules (bench/_corpus.mjs).
// Measured: median ms of an MCP ping (the JSON-RPC round trip over stdio every server shares: the floor of
// any call) and per read_file / write_file call over 1,000 files one call at a time; ms for one call
// reading the same 1,000 files (read_many_files / read_multiple_files); ms from spawning the server to the
// answer of its first read (start). sessionfs runs as `sessionfs mcp` does (bench/_mcp-serve.mjs): memory
// (the tree mounted, so copied in), host (`--root` on the tree) and overlay (`--overlay`, read in place).
// Prints one JSON document with the figures and the ratios sessionfs / official.
// Usage: node bench/mcp-calls.mjs [files] [calls]   (after `npm run build`)
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { copyCorpus } from './_corpus.mjs';
import { median, round } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 10_000);
const CALLS = Number(process.argv[3] ?? 1000);
const here = dirname(fileURLToPath(import.meta.url));
const official = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
);

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-mcp-')));
const tree = join(scratch, 'tree');
const corpus = copyCorpus(tree, FILES);
// The files read: text files of at most 16 KiB, spread over the tree, in walk order.
const TEXT = /\.(?:[cm]?js|[cm]?ts|json|md|txt|map|yml|yaml)$/;
const candidates = [];
const walk = (dir, rel) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) walk(join(dir, entry.name), path);
    else if (entry.isFile() && TEXT.test(entry.name) && fs.statSync(join(dir, entry.name)).size <= 16_384) candidates.push(path);
  }
};
walk(tree, '');
const step = Math.max(1, Math.floor(candidates.length / CALLS));
const picked = candidates.filter((_, i) => i % step === 0).slice(0, CALLS);
const SERVERS = ['official', 'memory', 'host', 'overlay'];
for (const name of SERVERS) fs.mkdirSync(join(tree, `out-${name}`));

/** How each server is started, and how a workspace path is named to it (the official server takes host paths). */
function server(name) {
  const serve = (options) => ({ command: process.execPath, args: [join(here, '_mcp-serve.mjs'), JSON.stringify(options)] });
  const limits = { tools: { maxReadManyFiles: CALLS, maxReadChars: 1_000_000_000 } };
  switch (name) {
    case 'official':
      return {
        ...{ command: process.execPath, args: [official, tree] },
        path: (p) => join(tree, p),
        read: 'read_text_file',
        many: 'read_multiple_files',
      };
    case 'memory':
      return {
        ...serve({ backend: 'memory', mounts: [{ hostPath: tree, mountPath: 'tree' }], allow: [scratch], ...limits }),
        path: (p) => `tree/${p}`,
      };
    case 'host':
      return { ...serve({ backend: 'host', root: tree, ...limits }), path: (p) => p };
    case 'overlay':
      return {
        ...serve({ backend: 'overlay', mounts: [{ hostPath: tree, mountPath: 'tree' }], allow: [scratch], ...limits }),
        path: (p) => `tree/${p}`,
      };
  }
}

async function measure(name) {
  const { command, args, path, read = 'read_file', many = 'read_many_files' } = server(name);
  const call = async (tool, params) => {
    const result = await client.callTool({ name: tool, arguments: params });
    if (result.isError) throw new Error(`${name} ${tool}: ${JSON.stringify(result.content).slice(0, 300)}`);
    return result;
  };
  const started = performance.now();
  const transport = new StdioClientTransport({ command, args, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  await call(read, { path: path(picked[0]) });
  const startMs = performance.now() - started;
  try {
    const perCall = async (tool, params) => {
      const once = (i, warm) => (tool === null ? client.ping() : call(tool, params(i, warm)));
      for (let i = 0; i < 20; i += 1) await once(i % picked.length, true);
      const samples = [];
      for (let i = 0; i < picked.length; i += 1) {
        const start = performance.now();
        await once(i, false);
        samples.push(performance.now() - start);
      }
      return round(median(samples), 3);
    };
    // The floor every server shares: an MCP ping, one JSON-RPC round trip over the same stdio and SDK.
    const pingMs = await perCall(null, () => undefined);
    const readMs = await perCall(read, (i) => ({ path: path(picked[i]) }));
    const writeMs = await perCall('write_file', (i, warm) => ({
      path: path(`out-${name}/${warm ? 'warm' : 'file'}${i}.txt`),
      content: `export const written = ${i};\n`.repeat(10),
    }));
    const start = performance.now();
    const result = await call(many, { paths: picked.map(path) });
    const readManyMs = performance.now() - start;
    const text = result.content.map((c) => c.text ?? '').join('');
    return { startMs: round(startMs), pingMs, readMs, writeMs, readManyMs: round(readManyMs), readManyChars: text.length };
  } finally {
    await client.close();
  }
}

try {
  const ms = {};
  for (const name of SERVERS) ms[name] = await measure(name);
  const ratio = (a, b) => round(a / b, 2);
  const ratios = {};
  for (const name of SERVERS.slice(1)) {
    ratios[name] = {
      read: ratio(ms[name].readMs, ms.official.readMs),
      write: ratio(ms[name].writeMs, ms.official.writeMs),
      readMany: ratio(ms[name].readManyMs, ms.official.readManyMs),
      start: ratio(ms[name].startMs, ms.official.startMs),
      // Per call above the shared floor (a ping): what each server itself adds to a read and a write.
      readAbovePing: ratio(ms[name].readMs - ms[name].pingMs, ms.official.readMs - ms.official.pingMs),
      writeAbovePing: ratio(ms[name].writeMs - ms[name].pingMs, ms.official.writeMs - ms.official.pingMs),
    };
  }
  console.log(
    JSON.stringify(
      {
        bench: 'mcp-calls',
        tree: { files: corpus.files, mb: round(corpus.bytes / 2 ** 20) },
        calls: picked.length,
        baseline: '@modelcontextprotocol/server-filesystem over stdio, on the same tree',
        goals: 'host read/write ≤ 1x official; memory ≤ 0.5x; start with --root and --overlay ≤ 1.5x',
        ms,
        ratios,
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
