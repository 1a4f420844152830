#!/usr/bin/env node
// Host snapshots against native git on the same trees: first snapshot, snapshot after 10 protocol writes
// (tracked and scan), after 10 files changed by another process (scan), and restore to the previous
// snapshot. Native git runs as users would script it, isolated from the user's config:
//   git --git-dir=X --work-tree=ROOT add -A && git commit      /      reset --hard && clean -fdx
// Prints one JSON document; `speedup` is native ms / sessionfs ms (above 1: sessionfs is faster).
// Usage: node bench/host-snapshot.mjs [sizes, default 1000,10000,50000] (after `npm run build`)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { hasNativeGit, nativeGitEnv } from './_native-git.mjs';
import { createWorkspace, hostDriver } from '../dist/src/index.js';

const sizes = (process.argv[2] ?? '1000,10000,50000').split(',').map(Number);
const ROUNDS = 5;
const scratch = fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-'));

const gitEnv = nativeGitEnv(scratch);
const hasGit = hasNativeGit(gitEnv);

function git(gitDir, root, ...args) {
  execFileSync('git', [`--git-dir=${gitDir}`, `--work-tree=${root}`, ...args], {
    env: gitEnv,
    stdio: ['ignore', 'ignore', 'inherit'],
    cwd: root,
  });
}

/** Tree of `count` small files, 100 per directory, two levels deep. */
function makeTree(root, count) {
  fs.mkdirSync(root, { recursive: true });
  for (let i = 0; i < count; i += 1) {
    const dir = join(root, `d${Math.floor(i / 1000)}`, `e${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n${'x'.repeat(64 + (i % 100))}\n`);
  }
}

const rel = (count, k, round) =>
  `d${Math.floor(((k * 7919 + round * 131) % count) / 1000)}/e${Math.floor(((k * 7919 + round * 131) % count) / 100) % 10}/f${(k * 7919 + round * 131) % count}.txt`;

async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round1 = (n) => Math.round(n * 10) / 10;
// Let the racy window of the previous step pass, as it would between real tool calls.
const pause = () => new Promise((resolve) => setTimeout(resolve, 120));

async function benchSize(count) {
  const base = join(scratch, String(count));
  const roots = { scan: join(base, 'scan'), tracked: join(base, 'tracked'), native: join(base, 'native') };
  for (const root of Object.values(roots)) makeTree(root, count);
  const result = { files: count };

  // ---- sessionfs, scan mode ----
  const scan = createWorkspace(hostDriver({ root: roots.scan, gitDir: join(base, 'scan.git') }));
  const first = await time(() => scan.snapshot());
  await pause();
  const scanWrites = [];
  const scanExternal = [];
  const restores = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let k = 0; k < 10; k += 1) await scan.write(rel(count, k, round), `protocol write ${round} ${k}\n`);
    let snap;
    scanWrites.push(await time(async () => (snap = await scan.snapshot())));
    await pause();
    for (let k = 0; k < 10; k += 1) fs.writeFileSync(join(roots.scan, rel(count, k + 10, round)), `external write ${round} ${k}\n`);
    scanExternal.push(await time(() => scan.snapshot()));
    await pause();
    restores.push(await time(() => scan.restore(snap)));
    await pause();
  }
  await scan.dispose();

  // ---- sessionfs, tracked mode ----
  const tracked = createWorkspace(hostDriver({ root: roots.tracked, gitDir: join(base, 'tracked.git'), changeDetection: 'tracked' }));
  const trackedFirst = await time(() => tracked.snapshot());
  const trackedWrites = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let k = 0; k < 10; k += 1) await tracked.write(rel(count, k, round), `protocol write ${round} ${k}\n`);
    trackedWrites.push(await time(() => tracked.snapshot()));
  }
  await tracked.dispose();

  // ---- native git ----
  if (hasGit) {
    const gitDir = join(base, 'native.git');
    execFileSync('git', ['init', '-q', '--bare', gitDir], { env: gitEnv });
    const commit = (root) => {
      git(gitDir, root, 'add', '-A');
      git(gitDir, root, 'commit', '-q', '--allow-empty', '--no-verify', '-m', 'snapshot');
    };
    const nFirst = await time(() => commit(roots.native));
    await pause();
    const nWrites = [];
    const nExternal = [];
    const nRestores = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let k = 0; k < 10; k += 1) fs.writeFileSync(join(roots.native, rel(count, k, round)), `protocol write ${round} ${k}\n`);
      nWrites.push(await time(() => commit(roots.native)));
      const previous = execFileSync('git', [`--git-dir=${gitDir}`, 'rev-parse', 'HEAD'], { env: gitEnv })
        .toString()
        .trim();
      await pause();
      for (let k = 0; k < 10; k += 1) fs.writeFileSync(join(roots.native, rel(count, k + 10, round)), `external write ${round} ${k}\n`);
      nExternal.push(await time(() => commit(roots.native)));
      await pause();
      nRestores.push(
        await time(() => {
          git(gitDir, roots.native, 'reset', '-q', '--hard', previous);
          git(gitDir, roots.native, 'clean', '-q', '-fdx');
        }),
      );
      await pause();
    }
    const row = (ours, theirs) => ({ sessionfsMs: round1(ours), nativeGitMs: round1(theirs), speedup: round1(theirs / ours) });
    result.firstSnapshot = row(first, nFirst);
    result.firstSnapshotTracked = row(trackedFirst, nFirst);
    result.after10ProtocolWritesTracked = row(median(trackedWrites), median(nWrites));
    result.after10ProtocolWritesScan = row(median(scanWrites), median(nWrites));
    result.after10ExternalChangesScan = row(median(scanExternal), median(nExternal));
    result.restoreToPrevious = row(median(restores), median(nRestores));
  } else {
    result.note = 'git binary not found: sessionfs figures only';
    result.firstSnapshot = { sessionfsMs: round1(first) };
    result.after10ProtocolWritesTracked = { sessionfsMs: round1(median(trackedWrites)) };
    result.after10ProtocolWritesScan = { sessionfsMs: round1(median(scanWrites)) };
    result.after10ExternalChangesScan = { sessionfsMs: round1(median(scanExternal)) };
    result.restoreToPrevious = { sessionfsMs: round1(median(restores)) };
  }
  fs.rmSync(base, { recursive: true, force: true });
  return result;
}

try {
  const results = [];
  for (const count of sizes) results.push(await benchSize(count));
  console.log(
    JSON.stringify(
      { bench: 'host-snapshot', node: process.version, platform: `${process.platform}-${process.arch}`, rounds: ROUNDS, results },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
