#!/usr/bin/env node
// grep and glob on a real tree (a copy of this project's node_modules, default 10,000 files), on both
// backends, side by side in one run with ripgrep (`rg -n --no-ignore`, a process: what an agent
// harness would shell out to) and tinyglobby (what a Node program would call). Checks that the counts
// agree and prints one JSON document; `ratio` is sessionfs ms / ripgrep (or tinyglobby) ms.
// Goals: host grep <= 3x rg, memory grep <= 2x rg, host glob <= 1.5x tinyglobby, memory glob <= 1x.
// Usage: node bench/search.mjs [files]   (after `npm run build`; ROUNDS=n to change the rounds, default 5)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { glob as tinyglob } from 'tinyglobby';
import { hydrate, createWorkspace, hostDriver, memoryDriver } from '../dist/src/index.js';
import { copyCorpus } from './_corpus.mjs';
import { round, time } from './_timing.mjs';
import { ripgrepCount } from './_ripgrep.mjs';

const FILES = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const GREP_PATTERNS = ['function\\s+\\w+Async', 'TODO', '\\bclass [A-Z]\\w*Error\\b'];
const GLOB_PATTERNS = ['**/*.ts', '**/package.json'];

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-search-')));
const corpus = join(scratch, 'corpus');

const timed = (task) => time(task, ROUNDS);

const rgVersion = spawnSync('rg', ['--version'], { encoding: 'utf8' });
const hasRg = rgVersion.status === 0;
if (!hasRg) console.error('# ripgrep (rg) is not on PATH: grep is timed without it (apt-get install ripgrep)');

const tree = copyCorpus(corpus, FILES);
const host = createWorkspace(hostDriver({ root: corpus }));
const memory = createWorkspace(memoryDriver());
await hydrate(memory, [{ hostPath: corpus, path: 'corpus' }], { allowedHostRoots: [scratch] });
const memoryBase = 'corpus';
const everything = { maxMatches: Number.MAX_SAFE_INTEGER, timeoutMs: 600_000 };

const grep = [];
for (const pattern of GREP_PATTERNS) {
  const rg = hasRg ? await timed(() => ripgrepCount(corpus, pattern)) : undefined;
  const onHost = await timed(async () => (await host.grep(pattern, everything)).length);
  const inMemory = await timed(async () => (await memory.grep(pattern, { ...everything, path: memoryBase })).length);
  grep.push({
    pattern,
    matches: { rg: rg?.output ?? null, host: onHost.output, memory: inMemory.output },
    rgMs: rg === undefined ? null : round(rg.ms),
    host: { ms: round(onHost.ms), ratio: rg === undefined ? null : round(onHost.ms / rg.ms, 2), goal: '<= 3x rg' },
    memory: { ms: round(inMemory.ms), ratio: rg === undefined ? null : round(inMemory.ms / rg.ms, 2), goal: '<= 2x rg' },
  });
}

const glob = [];
for (const pattern of GLOB_PATTERNS) {
  const tiny = await timed(async () => (await tinyglob(pattern, { cwd: corpus, dot: false, followSymbolicLinks: false })).length);
  const onHost = await timed(async () => (await host.glob(pattern, { timeoutMs: 600_000 })).length);
  const inMemory = await timed(async () => (await memory.glob(pattern, { path: memoryBase, timeoutMs: 600_000 })).length);
  glob.push({
    pattern,
    matches: { tinyglobby: tiny.output, host: onHost.output, memory: inMemory.output },
    tinyglobbyMs: round(tiny.ms),
    host: { ms: round(onHost.ms), ratio: round(onHost.ms / tiny.ms, 2), goal: '<= 1.5x tinyglobby' },
    memory: { ms: round(inMemory.ms), ratio: round(inMemory.ms / tiny.ms, 2), goal: '<= 1x tinyglobby' },
  });
}

const countsAgree =
  grep.every((g) => g.matches.host === g.matches.memory && (g.matches.rg === null || g.matches.rg === g.matches.host)) &&
  glob.every((g) => g.matches.host === g.matches.memory && g.matches.tinyglobby === g.matches.host);
console.log(
  JSON.stringify(
    {
      bench: 'search',
      tree: { files: tree.files, megabytes: round(tree.bytes / 1024 / 1024) },
      rounds: ROUNDS,
      ripgrep: hasRg ? rgVersion.stdout.split('\n')[0] : 'not on PATH: grep timed without it',
      countsAgree,
      grep,
      glob,
    },
    null,
    2,
  ),
);
await host.dispose();
await memory.dispose();
fs.rmSync(scratch, { recursive: true, force: true });
