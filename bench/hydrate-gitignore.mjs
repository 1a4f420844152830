#!/usr/bin/env node
// Hydrating a project whose `.gitignore` ignores its node_modules (and holding a `.git`), with the default
// (ignored files left out) and with `gitignore: false` (everything but `.git`), into a memory workspace:
// time, files and bytes of each. The project is this repository's src, test and docs; its node_modules is
// the first [files] files of the benches' corpus (real package trees, see _corpus.mjs).
// Usage: node bench/hydrate-gitignore.mjs [files]   (after `npm run build`)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { hydrate, createWorkspace, memoryDriver } from '../dist/src/index.js';
import { copyCorpus } from './_corpus.mjs';

const FILES = Number(process.argv[2] ?? 30_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-gitignore-')));
const project = join(scratch, 'project');
try {
  for (const part of ['src', 'test', 'docs']) fs.cpSync(join(repoRoot, part), join(project, part), { recursive: true });
  fs.writeFileSync(join(project, '.gitignore'), 'node_modules/\n*.log\n');
  const corpus = copyCorpus(join(project, 'node_modules'), FILES);
  execFileSync('git', ['init', '-q', project]);
  execFileSync('git', ['add', '-A'], { cwd: project });
  execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-qm', 'project'], { cwd: project });

  const run = async (gitignore) => {
    const times = [];
    let result;
    for (let round = 0; round < ROUNDS; round += 1) {
      const workspace = createWorkspace(memoryDriver());
      const started = performance.now();
      result = await hydrate(workspace, [{ hostPath: project, path: '/', gitignore }], { allowedHostRoots: [scratch] });
      times.push(performance.now() - started);
      await workspace.dispose();
    }
    const ms = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
    return { ms: Math.round(ms), files: result.files, bytes: result.bytes, skipped: result.skipped.map((s) => s.path) };
  };
  const honoured = await run(true);
  const everything = await run(false);
  console.log(
    JSON.stringify(
      {
        corpus: { nodeModulesFiles: corpus.files, nodeModulesBytes: corpus.bytes },
        gitignore: honoured,
        includeIgnored: { ...everything, skipped: everything.skipped.length },
        ratio: { time: +(everything.ms / honoured.ms).toFixed(1), bytes: +(everything.bytes / honoured.bytes).toFixed(1) },
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
