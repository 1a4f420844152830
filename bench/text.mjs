#!/usr/bin/env node
// Text fidelity's cost, side by side in one run, on both backends:
// - read_file through session.runTool on a UTF-8 file vs a raw workspace.read of it (what an orchestrator
//   calling the protocol pays);
// - read_file of a 1 MiB ISO-8859-1 file vs the same text in UTF-8 (goal: within 3x);
// - grep with .gitignore (node_modules/ ignored) vs without, on a tree of node_modules (default 5,000 files)
//   plus a small source tree (goal: no slower).
// Usage: node bench/text.mjs [files]   (after `npm run build`; ROUNDS=n, default 7)
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { createSession, hydrate, workspaceTools, createWorkspace, hostDriver, memoryDriver } from '../dist/src/index.js';
import { copyCorpus } from './_corpus.mjs';
import { round, time } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 5_000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-text-')));
const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));

const sentence = "Le café est prêt; nous partirons à midi pour la fête au château, n'oubliez pas les crêpes.\n";
const latin1Text = sentence.repeat(Math.ceil((1 << 20) / sentence.length));
const smallText = Array.from({ length: 200 }, (_, i) => `line ${i}: const value${i} = compute(${i});`).join('\n') + '\n';

const tree = copyCorpus(join(scratch, 'tree', 'node_modules'), FILES);
for (let i = 0; i < 50; i += 1) fs.mkdirSync(join(scratch, 'tree', 'src', `m${i % 5}`), { recursive: true });
for (let i = 0; i < 50; i += 1)
  fs.writeFileSync(join(scratch, 'tree', 'src', `m${i % 5}`, `f${i}.ts`), `// TODO item ${i}\nexport function f${i}Async() {}\n`);
fs.writeFileSync(join(scratch, 'tree', '.gitignore'), 'node_modules/\n');

async function onBackend(name, session) {
  const ws = session.filesystem;
  await ws.write('small.ts', smallText);
  await ws.writeBytes('latin1.txt', new Uint8Array(iconv.encode(latin1Text, 'latin1')));
  await ws.write('utf8.txt', latin1Text);
  const read = (path) => async () => {
    const result = await session.runTool(tools.get('read_file'), { path, limit: 100_000 });
    if (!result.success) throw new Error(result.message);
  };
  const raw = await time(() => ws.read('small.ts'), ROUNDS * 20);
  const tool = await time(read('small.ts'), ROUNDS * 20);
  const utf8 = await time(read('utf8.txt'), ROUNDS);
  const latin1 = await time(read('latin1.txt'), ROUNDS);
  const base = name === 'memory' ? 'tree' : '.';
  const everything = { path: base, maxMatches: 1e9, timeoutMs: 600_000 };
  const grep = {};
  for (const pattern of ['TODO', 'function\\s+\\w+Async']) {
    const plain = await time(async () => (await ws.grep(pattern, everything)).length, ROUNDS);
    const ignoring = await time(async () => (await ws.grep(pattern, { ...everything, respectGitignore: true })).length, ROUNDS);
    grep[pattern] = {
      matches: { all: plain.output, respectingGitignore: ignoring.output },
      withoutMs: round(plain.ms),
      withGitignoreMs: round(ignoring.ms),
      ratio: round(ignoring.ms / plain.ms, 2),
      goal: '<= 1x without',
    };
  }
  return {
    readFile: {
      rawReadMs: round(raw.ms, 3),
      runToolReadFileMs: round(tool.ms, 3),
      overheadMs: round(tool.ms - raw.ms, 3),
    },
    latin1MiB: { utf8Ms: round(utf8.ms), latin1Ms: round(latin1.ms), ratio: round(latin1.ms / utf8.ms, 2), goal: '<= 3x UTF-8' },
    grep,
  };
}

const results = {};
{
  const memory = createWorkspace(memoryDriver());
  await hydrate(memory, [{ hostPath: join(scratch, 'tree'), path: 'tree' }], { allowedHostRoots: [scratch] });
  await memory.write('.gitignore', 'node_modules/\n');
  const session = await createSession({ workspace: memory });
  results.memory = await onBackend('memory', session);
  await session.dispose();
  await memory.dispose();
}
{
  const host = createWorkspace(hostDriver({ root: join(scratch, 'tree') }));
  const session = await createSession({ workspace: host });
  results.host = await onBackend('host', session);
  await session.dispose();
  await host.dispose();
}
console.log(
  JSON.stringify(
    { bench: 'text', tree: { files: tree.files + 50, megabytes: round(tree.bytes / 1024 / 1024) }, rounds: ROUNDS, ...results },
    null,
    2,
  ),
);
fs.rmSync(scratch, { recursive: true, force: true });
