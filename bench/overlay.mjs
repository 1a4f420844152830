#!/usr/bin/env node
// The overlay backend on a real tree (a copy of this project's node_modules, default all of it, ~30k files),
// side by side in one run with what a user would pick instead:
// - open to first tool call: createSession({ backend: 'overlay' }) + one read_file, against hydrating the
//   same source into memory (createSession({ backend: 'memory', sources })) + the same call. Goal >= 100x.
// - grep through the overlay against the host backend on the same directory. Goal <= 1.5x.
// - snapshot after one write over a generated 100,000-file lower directory against the same over 1,000
//   files (O(1): the ratio stays near 1), with a diff of that write.
// Prints one JSON document. Usage: node bench/overlay.mjs [files] [bigFiles]   (after `npm run build`)
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSession, workspaceTools, createWorkspace, hostDriver, overlayDriver } from '../dist/src/index.js';
import { copyCorpus } from './_corpus.mjs';
import { median, round, time } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 1_000_000);
const BIG = Number(process.argv[3] ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const GREP_PATTERNS = ['function\\s+\\w+Async', 'TODO', '\\bclass [A-Z]\\w*Error\\b'];

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-overlay-')));
const corpus = join(scratch, 'corpus');
const readFile = workspaceTools().find((tool) => tool.name === 'read_file');

try {
  const tree = copyCorpus(corpus, FILES);
  // The file the first tool call reads (the corpus is cut wherever `files` says).
  const firstFile = 'FIRST.md';
  fs.writeFileSync(join(corpus, firstFile), '# the first file an agent reads\n');
  const sources = [{ hostPath: corpus, path: '/' }];

  /** ms from createSession to the end of the first tool call; the session is disposed after. */
  async function firstCall(backend) {
    const samples = [];
    const rounds = backend === 'memory' ? Math.max(1, Math.min(ROUNDS, 3)) : ROUNDS;
    for (let i = -1; i < rounds; i += 1) {
      const start = performance.now();
      const session = await createSession({ backend, sources, allowedHostRoots: [scratch] });
      const result = await session.runTool(readFile, { path: firstFile });
      if (!result.success) throw new Error(`read_file failed on ${backend}: ${result.message}`);
      const ms = performance.now() - start;
      await session.dispose();
      if (i >= 0) samples.push(ms);
    }
    return median(samples);
  }
  const overlayOpen = await firstCall('overlay');
  const hydratedOpen = await firstCall('memory');

  const host = createWorkspace(hostDriver({ root: corpus }));
  const overlay = createWorkspace(overlayDriver({ lower: corpus, allowedHostRoots: [scratch] }));
  const everything = { maxMatches: Number.MAX_SAFE_INTEGER, timeoutMs: 600_000 };
  const grep = [];
  for (const pattern of GREP_PATTERNS) {
    const onHost = await time(() => host.grep(pattern, everything), ROUNDS);
    const onOverlay = await time(() => overlay.grep(pattern, everything), ROUNDS);
    if (onHost.output.length !== onOverlay.output.length)
      throw new Error(`grep ${pattern}: host found ${onHost.output.length}, overlay ${onOverlay.output.length}`);
    grep.push({
      pattern,
      matches: onHost.output.length,
      hostMs: round(onHost.ms),
      overlayMs: round(onOverlay.ms),
      ratio: round(onOverlay.ms / onHost.ms, 2),
    });
  }
  await host.dispose();
  await overlay.dispose();

  /** A lower directory of `count` small files, 100 per directory. */
  function generate(dir, count) {
    for (let i = 0; i < count; i += 1) {
      const sub = join(dir, `d${Math.floor(i / 10_000)}`, `m${Math.floor(i / 100) % 100}`);
      if (i % 100 === 0) fs.mkdirSync(sub, { recursive: true });
      fs.writeFileSync(join(sub, `f${i}.txt`), `file ${i}\n`);
    }
  }
  async function snapshotAfterOneWrite(count) {
    const dir = join(scratch, `lower-${count}`);
    generate(dir, count);
    const ws = createWorkspace(overlayDriver({ lower: dir, allowedHostRoots: [scratch] }));
    const samples = [];
    const diffs = [];
    for (let i = -1; i < ROUNDS; i += 1) {
      const before = await ws.snapshot();
      await ws.write(`d0/m0/f${i + 1}.txt`, `changed ${i}\n`);
      let start = performance.now();
      await ws.snapshot();
      const snapshotMs = performance.now() - start;
      start = performance.now();
      const diff = await ws.diff(before);
      const diffMs = performance.now() - start;
      if (diff.length !== 1) throw new Error(`expected one change, diff has ${diff.length}`);
      if (i >= 0) {
        samples.push(snapshotMs);
        diffs.push(diffMs);
      }
    }
    await ws.dispose();
    return { files: count, snapshotMs: round(median(samples), 3), diffMs: round(median(diffs), 2) };
  }
  const small = await snapshotAfterOneWrite(Math.max(1, Math.round(BIG / 100)));
  const big = await snapshotAfterOneWrite(BIG);

  console.log(
    JSON.stringify(
      {
        bench: 'overlay',
        corpus: { files: tree.files, megabytes: round(tree.bytes / 1024 / 1024) },
        rounds: ROUNDS,
        firstToolCall: {
          overlayMs: round(overlayOpen, 2),
          hydrateMemoryMs: round(hydratedOpen),
          speedup: round(hydratedOpen / overlayOpen),
          goal: '>= 100x faster than hydrating',
        },
        grep: { patterns: grep, goal: 'overlay within 1.5x of the host backend' },
        snapshotAfterOneWrite: { small, big, ratio: round(big.snapshotMs / small.snapshotMs, 2), goal: 'O(1): ratio near 1' },
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
