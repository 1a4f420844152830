#!/usr/bin/env node
// What the host backend's housekeeping costs, each next to the work it rides along with:
// - the sweep of stale temp files a workspace runs when it opens a root (`tempFilesSwept`), on a root of
//   FILES files in 100-file directories holding a few temp files of a killed writer, against the first
//   snapshot of the same root (the full scan a workspace makes anyway);
// - the git-dir registration that keeps prunes and snapshots apart (GitDirGate: one file created, one
//   listing, one unlink), against a `tracked` snapshot after one write (the cheapest snapshot there is).
// Prints one JSON document. Usage: node bench/reliability.mjs [files, default 10000] (after `npm run build`)
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GitDirGate } from '../dist/src/backends/host/git/gate.js';
import { createWorkspace, hostDriver } from '../dist/src/index.js';

const FILES = Number(process.argv[2] ?? 10_000);
const ROUNDS = 5;
const GATE_CALLS = 2_000;
const scratch = fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-'));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round3 = (n) => Math.round(n * 1000) / 1000;

function makeTree(root) {
  for (let i = 0; i < FILES; i += 1) {
    const dir = join(root, `d${Math.floor(i / 1000)}`, `e${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`);
  }
}

/** Temp files of a writer that is gone (a pid above Linux's maximum), named as this host's library names them. */
function plantStaleTemps(root, count) {
  const host = createHash('sha256').update(hostname()).digest('hex').slice(0, 6);
  for (let i = 0; i < count; i += 1) {
    const name = `.sessionfs-tmp-999999999.1.${host}-${String(i).padStart(16, '0')}`;
    fs.writeFileSync(join(root, 'd0', `e${i % 10}`, name), 'half written');
  }
}

try {
  const sweepMs = [];
  const firstSnapshotMs = [];
  let removed = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const root = join(scratch, `root${round}`);
    makeTree(root);
    plantStaleTemps(root, 5);

    let start = performance.now();
    const ws = createWorkspace(hostDriver({ root }));
    removed = (await ws.tempFilesSwept).length;
    sweepMs.push(performance.now() - start);
    start = performance.now();
    await ws.snapshot();
    firstSnapshotMs.push(performance.now() - start);
    await ws.dispose();
  }

  const gitDir = join(scratch, 'git');
  const ws = createWorkspace(hostDriver({ gitDir, changeDetection: 'tracked' }));
  await ws.write('a.txt', 'start');
  await ws.snapshot();
  const snapshotMs = [];
  for (let i = 0; i < 200; i += 1) {
    await ws.write('a.txt', `version ${i}`);
    const start = performance.now();
    await ws.snapshot();
    snapshotMs.push(performance.now() - start);
  }
  await ws.dispose();
  const gate = new GitDirGate(fs.mkdtempSync(join(scratch, 'gate-')));
  const gateMs = [];
  for (let i = 0; i < GATE_CALLS; i += 1) {
    const start = performance.now();
    await gate.use(async () => undefined);
    gateMs.push(performance.now() - start);
  }

  console.log(
    JSON.stringify(
      {
        openSweep: {
          files: FILES,
          staleTempFilesRemoved: removed,
          sweepMs: round3(median(sweepMs)),
          firstSnapshotMs: round3(median(firstSnapshotMs)),
          sweepPerFirstSnapshot: round3(median(sweepMs) / median(firstSnapshotMs)),
        },
        pruneGate: {
          gateMs: round3(median(gateMs)),
          trackedSnapshotAfterOneWriteMs: round3(median(snapshotMs)),
          gatePerSnapshot: round3(median(gateMs) / median(snapshotMs)),
        },
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
