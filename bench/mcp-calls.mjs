#!/usr/bin/env node
// Per-call cost and start time over MCP, side by side in one run with the official filesystem server
// (@modelcontextprotocol/server-filesystem), every server a child process driven by the official SDK client
// over stdio, on one tree: the first 10,000 files of this project's node_modules (bench/_corpus.mjs).
// Measured: median ms of an MCP ping (the JSON-RPC round trip over stdio every server shares: the floor of
// any call) and per read_file / write_file call over 1,000 files one call at a time; ms for one call
// reading the same 1,000 files (read_many_files / read_multiple_files); ms from spawning the server to the
// answer of its first read (start). sessionfs runs as `sessionfs mcp` does (bench/_mcp-serve.mjs, bundled as the
// command is): memory
// (the tree mounted, so copied in), host (`--root` on the tree) and overlay (`--overlay`, read in place).
// Prints one JSON document with the figures and the ratios sessionfs / official.
// Calls are interleaved between the servers (blocks of 50, rotating order) so that none is measured against a
// warmer client; a floor server (bench/_mcp-floor.mjs) shows what stdio and the client cost by themselves.
// Usage: node bench/mcp-calls.mjs [files] [calls]   (after `npm run build`)
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bundleCli } from '../scripts/bundle-cli.mjs';
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
/** Not a server to pick: the transport and client alone (bench/_mcp-floor.mjs), measured for ping and read. */
const FLOOR = 'floor';

// sessionfs runs bundled as the `sessionfs` command is (dist/sessionfs.mjs, scripts/bundle-cli.mjs), from
// inside the package so that what it loads on first use resolves as the command's does (and outside dist/,
// which is published).
const serveScript = join(here, '../node_modules/.cache/sessionfs-bench/mcp-serve.mjs');
await bundleCli(join(here, '_mcp-serve.mjs'), serveScript);

/** How each server is started, and how a workspace path is named to it (the official server takes host paths). */
function server(name) {
  const serve = (options) => ({ command: process.execPath, args: [serveScript, JSON.stringify(options)] });
  const limits = { tools: { maxReadManyFiles: CALLS, maxReadChars: 1_000_000_000 } };
  switch (name) {
    case FLOOR:
      return { command: process.execPath, args: [join(here, '_mcp-floor.mjs'), tree], path: (p) => `tree/${p}` };
    case 'official':
      return {
        ...{ command: process.execPath, args: [official, tree] },
        path: (p) => join(tree, p),
        read: 'read_text_file',
        many: 'read_multiple_files',
      };
    case 'memory':
      return {
        ...serve({ backend: 'memory', mounts: [{ hostPath: tree, path: 'tree' }], allow: [scratch], ...limits }),
        path: (p) => `tree/${p}`,
      };
    case 'host':
      return { ...serve({ backend: 'host', root: tree, ...limits }), path: (p) => p };
    case 'overlay':
      return {
        ...serve({ backend: 'overlay', mounts: [{ hostPath: tree, path: 'tree' }], allow: [scratch], ...limits }),
        path: (p) => `tree/${p}`,
      };
  }
}

/** Starts a server and times it from spawning to the answer of its first read. */
async function connect(name) {
  const { command, args, path, read = 'read_file', many = 'read_many_files' } = server(name);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const call = async (tool, params) => {
    const result = await client.callTool({ name: tool, arguments: params });
    if (result.isError) throw new Error(`${name} ${tool}: ${JSON.stringify(result.content).slice(0, 300)}`);
    return result;
  };
  const started = performance.now();
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  await call(read, { path: path(picked[0]) });
  return { name, client, call, path, read, many, startMs: round(performance.now() - started) };
}

/**
 * Median ms per call of `once(server, i, warm)` for every server, the calls interleaved in blocks of BLOCK,
 * the order of the servers rotating from block to block: the client process warms up (its JIT, its heap)
 * while it runs, and a server measured after the others would be measured against a faster client.
 */
const BLOCK = 50;
async function perCall(servers, once) {
  for (const s of servers) for (let i = 0; i < 20; i += 1) await once(s, i % picked.length, true);
  const samples = servers.map(() => []);
  for (let from = 0, block = 0; from < picked.length; from += BLOCK, block += 1) {
    for (let k = 0; k < servers.length; k += 1) {
      const index = (k + block) % servers.length;
      for (let i = from; i < Math.min(picked.length, from + BLOCK); i += 1) {
        const start = performance.now();
        await once(servers[index], i, false);
        samples[index].push(performance.now() - start);
      }
    }
  }
  return samples.map((list) => round(median(list), 3));
}

const servers = [];
let floor;
try {
  // Start: three starts of each server in rotating order (the page cache and the machine drift alike for
  // all), the median; the servers of the last round stay up for the per-call figures.
  const starts = Object.fromEntries(SERVERS.map((name) => [name, []]));
  for (let round3 = 0; round3 < 3; round3 += 1) {
    for (let k = 0; k < SERVERS.length; k += 1) {
      const started = await connect(SERVERS[(k + round3) % SERVERS.length]);
      starts[started.name].push(started.startMs);
      if (round3 < 2) await started.client.close();
      else servers.push(started);
    }
  }
  servers.sort((a, b) => SERVERS.indexOf(a.name) - SERVERS.indexOf(b.name));
  for (const s of servers) s.startMs = round(median(starts[s.name]));
  floor = await connect(FLOOR);
  // The floor every server shares: an MCP ping, one JSON-RPC round trip over the same stdio and SDK.
  const pingMs = await perCall([...servers, floor], (s) => s.client.ping());
  const readMs = await perCall([...servers, floor], (s, i) => s.call(s.read, { path: s.path(picked[i]) }));
  const writeMs = await perCall(servers, (s, i, warm) =>
    s.call('write_file', {
      path: s.path(`out-${s.name}/${warm ? 'warm' : 'file'}${i}.txt`),
      content: `export const written = ${i};\n`.repeat(10),
    }),
  );
  // One call reading the 1,000 files, three times per server in rotating order: the median.
  const readMany = servers.map(() => []);
  for (let round3 = 0; round3 < 3; round3 += 1) {
    for (let k = 0; k < servers.length; k += 1) {
      const index = (k + round3) % servers.length;
      const s = servers[index];
      const start = performance.now();
      const result = await s.call(s.many, { paths: picked.map(s.path) });
      readMany[index].push({ ms: performance.now() - start, chars: result.content.map((c) => c.text ?? '').join('').length });
    }
  }
  const ms = {};
  servers.forEach((s, index) => {
    ms[s.name] = {
      startMs: s.startMs,
      pingMs: pingMs[index],
      readMs: readMs[index],
      writeMs: writeMs[index],
      readManyMs: round(median(readMany[index].map((r) => r.ms))),
      readManyChars: readMany[index][0].chars,
    };
  });
  const ratio = (a, b) => round(a / b, 2);
  const floorMs = { pingMs: pingMs[servers.length], readMs: readMs[servers.length] };
  const ratios = { floor: { read: ratio(floorMs.readMs, ms.official.readMs) } };
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
        floor: 'bench/_mcp-floor.mjs: no protocol library, no checks, the same bytes as a sessionfs read; stdio and the client alone',
        ms: { ...ms, floor: floorMs },
        ratios,
      },
      null,
      2,
    ),
  );
} finally {
  for (const s of servers) await s.client.close().catch(() => undefined);
  await floor?.client.close().catch(() => undefined);
  fs.rmSync(scratch, { recursive: true, force: true });
}
