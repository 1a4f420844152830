#!/usr/bin/env node
// Retention keeps a long session's memory bounded. 20,000 tool calls each write a 1 KiB file (one of 50
// paths, new content every time) on the memory backend, once with the default retention (1000 history
// entries, 100 snapshots) and once with none (`Infinity`, what a session did before retention). The heap is
// measured after a full collection (run with --expose-gc: `npm run bench -- retention`) every 2,000 calls.
// Host: 1,000 calls writing 4 KiB each, git dir bytes with the default retention vs none.
// Prints one JSON document. Usage: node --expose-gc bench/retention.mjs [calls] [hostCalls]   (after `npm run build`)
import * as fs from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { createSession, defineTool } from '../dist/src/index.js';

const CALLS = Number(process.argv[2] ?? 20_000);
const HOST_CALLS = Number(process.argv[3] ?? 1_000);
if (typeof globalThis.gc !== 'function') {
  console.error('run with --expose-gc (npm run bench -- retention does)');
  process.exit(2);
}

const write = defineTool({
  name: 'write',
  description: 'writes one file',
  parameters: z.object({ n: z.number(), size: z.number() }),
  async handler({ n, size }, { filesystem }) {
    await filesystem.write(`files/f${n % 50}.txt`, `${n}`.padEnd(size, String.fromCharCode(97 + (n % 26))));
    return { success: true, message: 'written' };
  },
});

const oneDecimal = (value) => Math.round(value * 10) / 10;
const mib = (bytes) => oneDecimal(bytes / 1024 / 1024);

function heapMiB() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

async function memoryRun(retention) {
  const session = await createSession({ backend: 'memory', retention });
  const samples = [];
  const start = heapMiB();
  for (let n = 0; n < CALLS; n += 1) {
    await session.runTool(write, { n, size: 1024 });
    if ((n + 1) % (CALLS / 10) === 0) samples.push(oneDecimal(heapMiB() - start));
  }
  const result = { heapGrowthMiB: samples, history: session.calls.length, snapshots: session.snapshots.length };
  await session.dispose();
  return result;
}

function directoryBytes(dir) {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? directoryBytes(path) : fs.statSync(path).size;
  }
  return total;
}

async function hostRun(retention) {
  const session = await createSession({ backend: 'host', retention });
  for (let n = 0; n < HOST_CALLS; n += 1) await session.runTool(write, { n, size: 4096 });
  const bytes = directoryBytes(session.filesystem.gitDir);
  await session.dispose();
  return { gitDirMiB: mib(bytes) };
}

const bounded = await memoryRun(undefined);
const unbounded = await memoryRun({ maxHistory: Infinity, maxSnapshots: Infinity });
const hostBounded = await hostRun(undefined);
const hostUnbounded = await hostRun({ maxHistory: Infinity, maxSnapshots: Infinity });
console.log(
  JSON.stringify(
    {
      bench: 'retention',
      memory: {
        calls: CALLS,
        sampledEvery: CALLS / 10,
        defaultRetention: bounded,
        noRetention: unbounded,
        finalHeapRatio: Math.round((unbounded.heapGrowthMiB.at(-1) / Math.max(0.1, bounded.heapGrowthMiB.at(-1))) * 10) / 10,
      },
      host: {
        calls: HOST_CALLS,
        defaultRetention: hostBounded,
        noRetention: hostUnbounded,
        gitDirRatio: Math.round((hostUnbounded.gitDirMiB / Math.max(0.1, hostBounded.gitDirMiB)) * 10) / 10,
      },
    },
    null,
    2,
  ),
);
