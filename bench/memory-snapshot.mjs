#!/usr/bin/env node
// Memory workspace snapshots against what a plain map store does (`new Map(previous)` per snapshot), and
// write-then-read of small files against memfs, measured side by side in one run. Prints JSON.
// Run: npm run bench -- memory-snapshot   (needs --expose-gc; bench/run.mjs passes it)
import { memfs } from 'memfs';
import { createWorkspace, memoryDriver } from '../dist/src/index.js';

const SIZES = (process.env.SIZES ?? '1000,10000,100000').split(',').map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 200);
// Heap figures are averaged over more snapshots than timings: a few hundred bytes each drown in GC noise otherwise.
const HEAP_ROUNDS = Number(process.env.HEAP_ROUNDS ?? 5000);
const gc =
  globalThis.gc ??
  (() => {
    throw new Error('run with --expose-gc (npm run bench does)');
  });

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const pathOf = (i) => `src/d${i % 100}/sub${Math.floor(i / 100) % 10}/file${i}.txt`;
const content = (i) => new TextEncoder().encode(`export const value${i} = ${i};\n`);

function heapUsed() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function memoryWorkspace(size) {
  const ws = createWorkspace(memoryDriver());
  for (let i = 0; i < size; i += 1) await ws.writeBytes(pathOf(i), content(i));
  // Time: snapshot() right after one write, the rollback pattern (write, snapshot, write, snapshot, ...).
  const times = [];
  const kept = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    await ws.writeBytes(pathOf((round * 7919) % size), content(round));
    const start = process.hrtime.bigint();
    kept.push(await ws.snapshot());
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  // Heap: what a snapshot itself retains (the record and the reference the workspace keeps).
  const before = heapUsed();
  for (let round = 0; round < HEAP_ROUNDS; round += 1) kept.push(await ws.snapshot());
  const perSnapshot = (heapUsed() - before) / HEAP_ROUNDS;
  return { medianSnapshotMs: median(times), retainedBytesPerSnapshot: Math.round(perSnapshot), kept: kept.length };
}

function copyTheMapStore(size) {
  let live = new Map();
  for (let i = 0; i < size; i += 1) live.set(pathOf(i), content(i));
  const rounds = Math.max(5, Math.min(ROUNDS, Math.floor(2_000_000 / size)));
  const times = [];
  const kept = [];
  for (let round = 0; round < rounds; round += 1) {
    live.set(pathOf((round * 7919) % size), content(round));
    const start = process.hrtime.bigint();
    kept.push(new Map(live));
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  kept.length = 0;
  const before = heapUsed();
  const heapRounds = Math.max(3, Math.min(20, Math.floor(200_000 / size)));
  for (let round = 0; round < heapRounds; round += 1) kept.push(new Map(live));
  const perSnapshot = (heapUsed() - before) / heapRounds;
  return { medianSnapshotMs: median(times), retainedBytesPerSnapshot: Math.round(perSnapshot), kept: kept.length };
}

async function writeThenRead(count) {
  const runs = 5;
  const ours = [];
  const theirs = [];
  for (let run = 0; run < runs; run += 1) {
    {
      const ws = createWorkspace(memoryDriver());
      const start = process.hrtime.bigint();
      for (let i = 0; i < count; i += 1) await ws.writeBytes(pathOf(i), content(i));
      let total = 0;
      for (let i = 0; i < count; i += 1) total += (await ws.readBytes(pathOf(i))).content.byteLength;
      ours.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (total === 0) throw new Error('read nothing');
    }
    {
      const { fs } = memfs();
      const start = process.hrtime.bigint();
      for (let i = 0; i < count; i += 1) {
        const path = `/${pathOf(i)}`;
        await fs.promises.mkdir(path.slice(0, path.lastIndexOf('/')), { recursive: true });
        await fs.promises.writeFile(path, content(i));
      }
      let total = 0;
      for (let i = 0; i < count; i += 1) total += (await fs.promises.readFile(`/${pathOf(i)}`)).byteLength;
      theirs.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (total === 0) throw new Error('read nothing');
    }
  }
  const sessionfs = median(ours);
  const memfsMs = median(theirs);
  return { files: count, sessionfsMs: round2(sessionfs), memfsMs: round2(memfsMs), speedupVsMemfs: round2(memfsMs / sessionfs) };
}

const round2 = (n) => Math.round(n * 100) / 100;
const round4 = (n) => Math.round(n * 10000) / 10000;

const snapshot = [];
for (const size of SIZES) {
  const ours = await memoryWorkspace(size);
  gc();
  const baseline = copyTheMapStore(size);
  gc();
  snapshot.push({
    files: size,
    sessionfs: { medianSnapshotMs: round4(ours.medianSnapshotMs), retainedBytesPerSnapshot: ours.retainedBytesPerSnapshot },
    copyTheMap: { medianSnapshotMs: round4(baseline.medianSnapshotMs), retainedBytesPerSnapshot: baseline.retainedBytesPerSnapshot },
    speedup: Math.round(baseline.medianSnapshotMs / ours.medianSnapshotMs),
  });
}
const smallest = snapshot[0].sessionfs.medianSnapshotMs;
const largest = snapshot.at(-1).sessionfs.medianSnapshotMs;
const result = {
  bench: 'memory-snapshot',
  node: process.version,
  rounds: ROUNDS,
  heapRounds: HEAP_ROUNDS,
  snapshot,
  flatness: { smallestTreeMs: smallest, largestTreeMs: largest, ratio: round2(largest / smallest) },
  writeThenRead: await writeThenRead(10_000),
  goals: {
    speedupAtLargestAtLeast1000x: snapshot.at(-1).speedup >= 1000,
    retainedPerSnapshotAtMost2KiB: snapshot.every((row) => row.sessionfs.retainedBytesPerSnapshot <= 2048),
  },
};
console.log(JSON.stringify(result, null, 2));
