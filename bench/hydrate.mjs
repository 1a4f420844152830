#!/usr/bin/env node
// Hydration of a generated host tree (default 10,000 files, about 100 MB) into a memory workspace and into a
// host workspace, side by side with `cp -r` of the same tree in the same run (page cache warm for all).
// Also times the host workspace's first snapshot after hydration. Set TMPDIR to put the tree, the copies
// and the host roots on another filesystem (e.g. TMPDIR=/dev/shm to take a noisy disk out of the figures). Prints one JSON document; `ratio` is
// sessionfs ms / `cp -r` ms (goals: host <= 1.5, memory <= 2).
// CORPUS=node_modules hydrates the first [files] files of this project's node_modules instead (real package
// trees: deep folders, many small files; see _corpus.mjs); `tree.kind` says which tree was measured.
// Usage: node bench/hydrate.mjs [files] [megabytes]   (after `npm run build`)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { hydrate, createWorkspace, hostDriver, memoryDriver } from '../dist/src/index.js';
import { copyCorpus } from './_corpus.mjs';
import { hasNativeGit, nativeGitEnv } from './_native-git.mjs';

const FILES = Number(process.argv[2] ?? 10_000);
const MEGABYTES = Number(process.argv[3] ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CORPUS = process.env.CORPUS === 'node_modules';

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-hydrate-')));
const source = join(scratch, 'source');

/** A deterministic tree: 100 files per directory, two levels, sizes spread around the mean. */
function makeTree() {
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const mean = (MEGABYTES * 1024 * 1024) / FILES;
  const block = Buffer.alloc(Math.ceil(mean * 2) + 1);
  for (let i = 0; i < block.length; i += 1) block[i] = Math.floor(random() * 256);
  let bytes = 0;
  for (let i = 0; i < FILES; i += 1) {
    const dir = join(source, `pkg${Math.floor(i / 1000)}`, `mod${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
    const size = Math.floor(mean * 2 * random());
    const offset = Math.floor(random() * (block.length - size));
    fs.writeFileSync(join(dir, `file${i}.dat`), block.subarray(offset, offset + size));
    bytes += size;
  }
  fs.mkdirSync(join(source, 'empty', 'dir'), { recursive: true });
  return bytes;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

const gitEnv = nativeGitEnv(scratch);
const hasGit = hasNativeGit(gitEnv);

/** What a shadow-git checkpointer pays for its first checkpoint of the same tree: `add -A && commit`. */
function timeNativeFirstCommit(tree) {
  const gitDir = `${tree}.git`;
  const git = (...args) =>
    execFileSync('git', [`--git-dir=${gitDir}`, `--work-tree=${tree}`, ...args], { env: gitEnv, stdio: 'ignore', cwd: tree });
  execFileSync('git', ['init', '--bare', '-q', gitDir], { env: gitEnv, stdio: 'ignore' });
  const start = performance.now();
  git('add', '-A');
  git('-c', 'gc.auto=0', 'commit', '-q', '--no-verify', '-m', 'checkpoint');
  const ms = performance.now() - start;
  fs.rmSync(gitDir, { recursive: true, force: true, maxRetries: 5 });
  return ms;
}

function timeCp(target) {
  const start = performance.now();
  execFileSync('cp', ['-r', source, target]);
  return performance.now() - start;
}

async function timeHydrate(create) {
  const workspace = create();
  const start = performance.now();
  const result = await hydrate(workspace, [{ hostPath: source, path: 'source' }], { allowedHostRoots: [scratch] });
  const ms = performance.now() - start;
  return { workspace, ms, result };
}

const bytes = CORPUS ? copyCorpus(source, FILES).bytes : makeTree();
// Warm the page cache, and check the copy.
fs.rmSync(join(scratch, 'warm'), { recursive: true, force: true });
timeCp(join(scratch, 'warm'));
fs.rmSync(join(scratch, 'warm'), { recursive: true, force: true });

const cp = [];
const memory = [];
const host = [];
const hostSnapshot = [];
const hostSnapshotTracked = [];
const nativeFirstCommit = [];
let files = 0;
// Round -1 warms up (JIT, page cache, allocator) and is not counted.
for (let i = -1; i < ROUNDS; i += 1) {
  const counted = i >= 0;
  const target = join(scratch, `cp-${i}`);
  const cpMs = timeCp(target);
  if (counted && hasGit) nativeFirstCommit.push(timeNativeFirstCommit(target));
  fs.rmSync(target, { recursive: true, force: true });
  if (counted) cp.push(cpMs);
  if (globalThis.gc) globalThis.gc();

  const inMemory = await timeHydrate(() => createWorkspace(memoryDriver()));
  if (counted) memory.push(inMemory.ms);
  files = inMemory.result.files;
  await inMemory.workspace.dispose();
  if (globalThis.gc) globalThis.gc();

  for (const changeDetection of ['tracked', 'scan']) {
    const onHost = await timeHydrate(() => createWorkspace(hostDriver({ changeDetection })));
    if (counted && changeDetection === 'tracked') host.push(onHost.ms);
    const start = performance.now();
    await onHost.workspace.snapshot();
    if (counted) (changeDetection === 'scan' ? hostSnapshot : hostSnapshotTracked).push(performance.now() - start);
    await onHost.workspace.dispose();
  }
  if (globalThis.gc) globalThis.gc();
}

const cpMs = median(cp);
console.log(
  JSON.stringify(
    {
      bench: 'hydrate',
      tree: { kind: CORPUS ? 'node_modules' : 'generated', files, bytes, megabytes: round(bytes / 1024 / 1024) },
      rounds: ROUNDS,
      cpRecursiveMs: round(cpMs),
      memory: { ms: round(median(memory)), ratio: round(median(memory) / cpMs, 2), goal: '<= 2x cp -r' },
      host: { ms: round(median(host)), ratio: round(median(host) / cpMs, 2), goal: '<= 1.5x cp -r' },
      hostFirstSnapshotAfterHydrationMs: {
        scan: round(median(hostSnapshot)),
        tracked: round(median(hostSnapshotTracked)),
        nativeGitAddCommit: hasGit ? round(median(nativeFirstCommit)) : null,
        speedupVsNative: hasGit ? round(median(nativeFirstCommit) / median(hostSnapshotTracked), 2) : null,
      },
      samplesMs: { cp: cp.map((v) => round(v)), memory: memory.map((v) => round(v)), host: host.map((v) => round(v)) },
    },
    null,
    2,
  ),
);
fs.rmSync(scratch, { recursive: true, force: true });
