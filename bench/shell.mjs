#!/usr/bin/env node
// The bash tool against real bash, side by side in one run.
// 1. Search commands on a copy of node_modules (default 10,000 files): `grep -rn` and `find | wc -l`
//    through `session.runTool(shellTool())` on a memory and a host session, and through the host mode
//    (real bash in the root), against real GNU bash + grep/find run on the same files on disk.
// 2. A 100-command agent session (a realistic mix of ls, cat, grep, sed -i, mkdir -p, mv, heredocs, pipes)
//    on a small project, end to end through runTool (snapshot per call included), against real bash started
//    once per command, as an agent harness shelling out would.
// Counts and outputs are checked to agree. `ratio` is sessionfs ms / real bash ms. Known differences of
// just-bash's own grep (not of the workspace under it), which `grep -rn` counts show on node_modules: it
// skips dotfiles in a recursive search, and reads binary files as text where GNU grep says "binary file matches".
// Usage: node bench/shell.mjs [files]   (after `npm run build`; ROUNDS=n to change the rounds, default 3)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSession } from '../dist/src/index.js';
import { shellTool } from '../dist/src/entries/shell.js';
import { copyCorpus } from './_corpus.mjs';
import { median, round, time } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SEARCHES = ["grep -rn 'function' . | wc -l", 'grep -rln TODO . | wc -l', "find . -name '*.ts' | wc -l", 'find . -type f | wc -l'];

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-shell-')));

function realBash(command, cwd) {
  const result = spawnSync('bash', ['-c', command], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    // The caller's environment, as a harness shelling out passes it, in the C locale. (With SHLVL unset and
    // its stdin on a socket, bash takes itself for a remote shell and sources ~/.bashrc: 90-270 ms a start
    // here, which would flatter sessionfs.)
    env: { ...process.env, LC_ALL: 'C' },
  });
  return { exitCode: result.status, stdout: result.stdout };
}

const timed = (task) => time(task, ROUNDS);

async function sessions(hydrateFrom) {
  const sources = [{ hostPath: hydrateFrom, path: '/' }];
  const memory = await createSession({ backend: 'memory', sources, allowedHostRoots: [scratch] });
  const host = await createSession({ backend: 'host', sources, allowedHostRoots: [scratch], changeDetection: 'tracked' });
  return { memory, host };
}

function runner(session, tool) {
  return async (command) => {
    const result = await session.runTool(tool, { command, timeout_ms: 600_000 });
    if (!result.success) throw new Error(`${command}: ${result.message}`);
    return result.value;
  };
}

// ---- 1. search commands on the corpus ----
const corpus = join(scratch, 'corpus');
const tree = copyCorpus(corpus, FILES);
const big = await sessions(corpus);
const interpreter = shellTool({ executionLimits: { maxOutputSize: 1 << 30 }, maxOutputChars: 1 << 20 });
const hostMode = shellTool({
  mode: 'host',
  maxOutputChars: 1 << 20,
  allowedCommands: ['ls', 'find', 'sort', 'head', 'tail', 'grep', 'xargs', 'cat', 'sed', 'wc', 'mv', 'mkdir'],
});
const search = [];
for (const command of SEARCHES) {
  const real = await timed(() => realBash(command, corpus));
  const memory = await timed(() => runner(big.memory, interpreter)(command));
  const host = await timed(() => runner(big.host, interpreter)(command));
  const onHost = await timed(() => runner(big.host, hostMode)(command));
  const counts = {
    realBash: real.output.stdout.trim(),
    memory: memory.output.stdout.trim(),
    host: host.output.stdout.trim(),
    hostMode: onHost.output.stdout.trim(),
  };
  search.push({
    command,
    counts,
    countsAgree: new Set(Object.values(counts)).size === 1,
    realBashMs: round(real.ms),
    memory: { ms: round(memory.ms), ratio: round(memory.ms / real.ms, 2) },
    host: { ms: round(host.ms), ratio: round(host.ms / real.ms, 2) },
    hostMode: { ms: round(onHost.ms), ratio: round(onHost.ms / real.ms, 2) },
  });
}
await big.memory.dispose();
await big.host.dispose();

// ---- 2. a 100-command agent session on a small project ----
const project = join(scratch, 'project');
copyCorpus(project, 60);

/** What an agent does while fixing something: look around, read, search, edit, move, check. */
function agentCommands() {
  const commands = ['ls', 'find . -maxdepth 2 -type d | sort | head -20', "find . -name '*.json' | sort | head -5"];
  for (let i = 0; commands.length < 100; i += 1) {
    const dir = `work/step${i}`;
    commands.push(
      `mkdir -p ${dir} && cat > ${dir}/notes.md <<'EOF'\n# Step ${i}\nTODO: check the exports\nEOF`,
      `grep -rn 'TODO' work | sort | tail -3`,
      `find . -name 'package.json' | sort | head -3 | xargs cat | grep -c '"name"'`,
      `sed -i 's/TODO/DONE/' ${dir}/notes.md && cat ${dir}/notes.md`,
      `wc -l ${dir}/notes.md && head -1 ${dir}/notes.md`,
      `mv ${dir}/notes.md ${dir}/done.md && ls ${dir}`,
      `echo "step ${i}" >> work/log.txt && tail -1 work/log.txt`,
      `grep -c DONE ${dir}/done.md || true`,
      `for f in $(ls ${dir}); do echo "$f: $(wc -c < ${dir}/$f)"; done`,
      `test -d ${dir} && echo ok`,
    );
  }
  return commands.slice(0, 100);
}

const COMMANDS = agentCommands();
const copies = (name) => {
  const dir = join(scratch, name);
  fs.cpSync(project, dir, { recursive: true });
  return dir;
};
const sessionRuns = {};
for (let i = -1; i < ROUNDS; i += 1) {
  const realDir = copies(`real-${i}`);
  const small = await sessions(project);
  const lanes = {
    realBash: async (command) => realBash(command, realDir),
    memory: runner(small.memory, interpreter),
    host: runner(small.host, interpreter),
  };
  for (const [lane, run] of Object.entries(lanes)) {
    const start = performance.now();
    const outputs = [];
    for (const command of COMMANDS) outputs.push((await run(command)).stdout);
    if (i >= 0) (sessionRuns[lane] ??= { ms: [], outputs }).ms.push(performance.now() - start);
  }
  await small.memory.dispose();
  await small.host.dispose();
  // The host mode on a fresh host session of its own (the one above has run the script already).
  const fresh = await sessions(project);
  const run = runner(fresh.host, hostMode);
  const start = performance.now();
  const outputs = [];
  for (const command of COMMANDS) outputs.push((await run(command)).stdout);
  if (i >= 0) (sessionRuns.hostMode ??= { ms: [], outputs }).ms.push(performance.now() - start);
  await fresh.memory.dispose();
  await fresh.host.dispose();
}
const realSessionMs = median(sessionRuns.realBash.ms);
const agentSession = { commands: COMMANDS.length, realBashMs: round(realSessionMs) };
for (const lane of ['memory', 'host', 'hostMode']) {
  const ms = median(sessionRuns[lane].ms);
  const differing = sessionRuns[lane].outputs.filter((out, n) => out !== sessionRuns.realBash.outputs[n]).length;
  agentSession[lane] = {
    ms: round(ms),
    perCommandMs: round(ms / COMMANDS.length, 2),
    ratio: round(ms / realSessionMs, 2),
    outputsDifferingFromRealBash: differing,
  };
}

console.log(
  JSON.stringify(
    { bench: 'shell', tree: { files: tree.files, megabytes: round(tree.bytes / 1024 / 1024) }, rounds: ROUNDS, search, agentSession },
    null,
    2,
  ),
);
fs.rmSync(scratch, { recursive: true, force: true });
