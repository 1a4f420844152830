#!/usr/bin/env node
// Policy + audit overhead per operation: a write/read mix of OPS operations on the memory and host
// backends, each with no governance, with a policy (allow/deny globs, blockedExtensions, maxFileBytes), with
// `audit: [memoryAuditSink()]`, with a JSONL sink, and with the policy and both sinks together. Every
// configuration runs the same operations, interleaved round by round in one process, so drift hits them
// alike. Each block of operations ends with one turn of the event loop, measured with it, so what a sink
// defers to the loop (the JSONL sink's batched append) is paid inside the measured figure; a block is
// measured in CPU time of the process (process.cpuUsage: user + system, GC threads included), which other
// processes on a busy machine do not inflate the way they inflate wall time. Prints JSON: per-op wall-time
// medians (µs), the median block's CPU time per operation, and each configuration's ratio to the
// ungoverned workspace (goal: policy + audit ≤ 1.05).
// Usage: node bench/governance.mjs [ops] [rounds] [memory,host]   (after `npm run build`)
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createWorkspace, hostDriver, memoryDriver } from '../dist/src/index.js';
import { jsonlAuditSink, memoryAuditSink } from '../dist/src/entries/governance.js';
import { median, round } from './_timing.mjs';

const OPS = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const BACKENDS = (process.argv[4] ?? 'memory,host').split(',');
const FILES = 500;

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-governance-')));
const POLICY = {
  allow: ['src/**', 'docs/**', 'package.json'],
  deny: ['**/.env', '**/secrets/**', '**/*.secret'],
  blockedExtensions: ['.pem', '.key', '.p12'],
  maxFileBytes: 1024 * 1024,
};

/** The same paths and contents every time: a project of FILES files, half of the operations writes. */
const paths = Array.from({ length: FILES }, (_, i) => (i % 10 === 0 ? `docs/page${i}.md` : `src/pkg${i % 7}/mod${i % 13}/file${i}.ts`));
const content = (i) => `export const value${i} = ${i};\n`.repeat(4);

const CONFIGS = {
  none: () => ({}),
  policy: () => ({ policy: POLICY }),
  'audit-memory': () => ({ audit: [memoryAuditSink({ max: 1000 })] }),
  'audit-jsonl': (label) => ({ audit: [jsonlAuditSink(join(scratch, `${label}.jsonl`))] }),
  'policy+audit': (label) => ({
    policy: POLICY,
    audit: [memoryAuditSink({ max: 1000 }), jsonlAuditSink(join(scratch, `${label}-both.jsonl`))],
  }),
};

/**
 * Host workspaces of every configuration share one root (each with its own git dir): two ungoverned
 * workspaces on roots of their own differed by up to 25% in CPU per operation in one run (where on the
 * disk a root's files land), which hid what governance costs.
 */
function open(backend, options, label) {
  if (backend === 'memory') return createWorkspace(memoryDriver(), options);
  const root = join(scratch, 'host-root');
  fs.mkdirSync(root, { recursive: true });
  return createWorkspace(hostDriver({ root, gitDir: join(scratch, `${label}.git`) }), options);
}

/** Operations in one block: every configuration runs the same block in turn, so noise hits them alike. */
const BLOCK = 250;

/** Operation `i` (even: write, odd: read) on `workspace`, timed; returns ms. */
async function operation(workspace, i) {
  const n = (i * 7919) % FILES;
  const start = performance.now();
  if (i % 2 === 0) await workspace.write(paths[n], content(i));
  else await workspace.read(paths[(n + 1) % FILES]);
  return performance.now() - start;
}

async function measure(backend) {
  const names = Object.keys(CONFIGS);
  const workspaces = {};
  for (const name of names) {
    const label = `${backend}-${name}`;
    const workspace = open(backend, CONFIGS[name](label), label);
    for (let i = 0; i < FILES; i += 1) await workspace.write(paths[i], content(i));
    workspaces[name] = workspace;
  }
  const samples = Object.fromEntries(names.map((name) => [name, { all: [], write: [], read: [], block: [] }]));
  const spent = Object.fromEntries(names.map((name) => [name, 0]));
  for (const name of names) for (let i = 0; i < BLOCK * 4; i += 1) await operation(workspaces[name], i); // warm-up (JIT)
  let turn = 0;
  for (let r = 0; r < ROUNDS; r += 1) {
    for (let from = 0; from < OPS; from += BLOCK) {
      // A different order each block, so no configuration always runs first or after the same one.
      turn += 1;
      const order = names.map((_, k) => names[(k + turn) % names.length]);
      for (const name of order) {
        const to = Math.min(from + BLOCK, OPS);
        const blockStart = process.cpuUsage();
        for (let i = from; i < to; i += 1) {
          const ms = await operation(workspaces[name], i);
          samples[name].all.push(ms);
          samples[name][i % 2 === 0 ? 'write' : 'read'].push(ms);
        }
        await new Promise((resolve) => setImmediate(resolve)); // the loop turn a sink's batched write runs in
        const cpu = process.cpuUsage(blockStart);
        const blockMs = (cpu.user + cpu.system) / 1000;
        spent[name] += blockMs;
        samples[name].block.push(blockMs / (to - from));
      }
    }
  }
  for (const workspace of Object.values(workspaces)) await workspace.dispose();
  const base = median(samples.none.all);
  const result = {};
  for (const name of names) {
    const perOp = median(samples[name].all);
    result[name] = {
      medianUs: round(perOp * 1000, 2),
      writeMedianUs: round(median(samples[name].write) * 1000, 2),
      readMedianUs: round(median(samples[name].read) * 1000, 2),
      blockCpuUs: round(median(samples[name].block) * 1000, 2),
      cpuMeanUs: round((spent[name] / (OPS * ROUNDS)) * 1000, 2),
      ratio: round(perOp / base, 3),
      cpuRatio: round(median(samples[name].block) / median(samples.none.block), 3),
      cpuMeanRatio: round(spent[name] / spent.none, 3),
    };
  }
  return result;
}

try {
  const results = {};
  for (const backend of BACKENDS) results[backend] = await measure(backend);
  console.log(
    JSON.stringify(
      {
        bench: 'governance',
        ops: OPS,
        mix: '50% write, 50% read',
        files: FILES,
        rounds: ROUNDS,
        note: 'ratio = per-op wall-time median / the ungoverned one; cpuRatio = median block CPU time per op (its ops and one event-loop turn: sink writes and GC included) / the ungoverned one; cpuMeanRatio = the same with total CPU time; goal policy+audit <= 1.05',
        ...results,
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
