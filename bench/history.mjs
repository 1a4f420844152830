#!/usr/bin/env node
// History, side by side in one run (docs/history.md, docs/inspector.md):
// - undo and redo of a turn that changed 100 files of a 100k-file memory session (goal ≤ 5 ms each);
// - blame of a 5,000-line file that 200 calls edited (goal ≤ 50 ms);
// - merge of two forks of a 100k-file memory session, each changing 100 files (goal ≤ 100 ms), against
//   `git merge` of the same trees in a real repository (the ratio);
// - the inspector's first paint for a 1,000-call stored session, in Chromium (goal ≤ 1 s): the time from
//   navigation to the first contentful paint, and to the paint after the timeline's 1,000 rows are in.
// Prints one JSON document. Usage: node bench/history.mjs [files] (after `npm run build`; Chromium at
// /usr/bin/chromium or $CHROMIUM_PATH; git on PATH for the side-by-side figure).
/* global requestAnimationFrame, document -- page.evaluate runs its function in the page */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { createSession, defineTool } from '../dist/src/index.js';
import { localSessionStore } from '../dist/src/entries/store.js';
import { hasNativeGit, nativeGitEnv } from './_native-git.mjs';
import { median, round, time } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 100_000);
const CHANGED = 100;
const ROUNDS = 5;
const CLI = fileURLToPath(new URL('../dist/sessionfs.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'sessionfs-bench-history-'));
const pathOf = (i) => `d${String(i % 100).padStart(2, '0')}/f${i}.txt`;

const writeMany = defineTool({
  name: 'write_many',
  description: 'rewrites the files it is given',
  parameters: z.object({ paths: z.array(z.string()), tag: z.string() }),
  async handler({ paths, tag }, { filesystem }) {
    for (const path of paths) await filesystem.write(path, `${path} ${tag}\n`);
    return { success: true, message: 'written' };
  },
});

const editLine = defineTool({
  name: 'edit_line',
  description: 'rewrites one line of a file',
  parameters: z.object({ path: z.string(), line: z.number(), text: z.string() }),
  async handler({ path, line, text }, { filesystem }) {
    const lines = (await filesystem.read(path, { limit: -1 })).content.split('\n');
    lines[line] = text;
    await filesystem.write(path, lines.join('\n'));
    return { success: true, message: 'edited' };
  },
});

async function bigSession() {
  const session = await createSession({ backend: 'memory' });
  const entries = Array.from({ length: FILES }, (_, i) => ({ kind: 'file', path: pathOf(i), content: Buffer.from(`file ${i}\n`) }));
  for (let start = 0; start < entries.length; start += 10_000) await session.filesystem.writeFiles(entries.slice(start, start + 10_000));
  return session;
}

/** Undo then redo of the last turn (100 files), alternately: the median of each. */
async function undoRedo() {
  const session = await bigSession();
  await session.turn('change 100 files');
  await session.runTool(writeMany, { paths: Array.from({ length: CHANGED }, (_, i) => pathOf(i * 997)), tag: 'changed' });
  const undo = [];
  const redo = [];
  for (let i = -1; i < ROUNDS * 2; i += 1) {
    let start = performance.now();
    await session.undo();
    if (i >= 0) undo.push(performance.now() - start);
    start = performance.now();
    await session.redo();
    if (i >= 0) redo.push(performance.now() - start);
  }
  const check = (await session.filesystem.read(pathOf(0))).content;
  await session.dispose();
  if (!check.includes('changed')) throw new Error('redo did not bring the turn back');
  return { files: FILES, changed: CHANGED, undoMs: round(median(undo), 2), redoMs: round(median(redo), 2), goalMs: 5 };
}

async function blame() {
  // Every edit's snapshots kept, so that blame reads all 200 versions.
  const session = await createSession({ backend: 'memory', retention: { maxSnapshots: 1_000 } });
  const LINES = 5_000;
  const EDITS = 200;
  await session.filesystem.write('big.txt', Array.from({ length: LINES }, (_, i) => `line ${i}`).join('\n'));
  for (let edit = 0; edit < EDITS; edit += 1)
    await session.runTool(editLine, { path: 'big.txt', line: (edit * 7919) % LINES, text: `edited by call ${edit}` });
  const { ms, output } = await time(() => session.blame('big.txt'), ROUNDS);
  const owners = new Set(output.lines.map((line) => line.operationId));
  await session.dispose();
  if (output.lines.length !== LINES || owners.size !== EDITS + 1) throw new Error('blame did not name each edit (and the untouched lines)');
  return { lines: LINES, edits: EDITS, operationsNamed: owners.size, ms: round(ms, 1), goalMs: 50 };
}

/** Two forks of one 100k-file session, each changing 100 other files; `a.merge(b)` timed, fresh forks each round. */
async function merge() {
  const parent = await bigSession();
  const samples = [];
  let merged = 0;
  for (let i = -1; i < ROUNDS; i += 1) {
    const a = await parent.fork();
    const b = await parent.fork();
    await a.runTool(writeMany, { paths: Array.from({ length: CHANGED }, (_, k) => pathOf(k * 2)), tag: `a${i}` });
    await b.runTool(writeMany, { paths: Array.from({ length: CHANGED }, (_, k) => pathOf(k * 2 + 1)), tag: `b${i}` });
    const start = performance.now();
    const result = await a.merge(b);
    if (i >= 0) samples.push(performance.now() - start);
    if (!result.applied || result.conflicts.length > 0) throw new Error('the forks did not merge cleanly');
    merged = result.merged.length;
    await a.dispose();
    await b.dispose();
  }
  await parent.dispose();
  return { files: FILES, changedPerFork: CHANGED, merged, ms: round(median(samples), 1), goalMs: 100, git: gitMerge() };
}

/** The same trees in a real repository: `git merge --no-edit b` on a, reset between rounds. */
function gitMerge() {
  const repo = join(scratch, 'git');
  const env = nativeGitEnv(scratch);
  if (!hasNativeGit(env)) return null;
  const git = (...args) =>
    execFileSync('git', args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 })
      .toString()
      .trim();
  mkdirSync(repo);
  for (let i = 0; i < 100; i += 1) mkdirSync(join(repo, `d${String(i).padStart(2, '0')}`));
  for (let i = 0; i < FILES; i += 1) writeFileSync(join(repo, pathOf(i)), `file ${i}\n`);
  git('init', '-q', '-b', 'main');
  git('config', 'gc.auto', '0'); // no collection in the background while the rounds run (or while the scratch is removed)
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  const change = (branch, offset) => {
    git('checkout', '-q', '-b', branch, 'main');
    for (let k = 0; k < CHANGED; k += 1) writeFileSync(join(repo, pathOf(k * 2 + offset)), `${pathOf(k * 2 + offset)} ${branch}\n`);
    git('commit', '-q', '-am', branch);
    return git('rev-parse', 'HEAD');
  };
  change('b', 1);
  const a = change('a', 0);
  const samples = [];
  for (let i = -1; i < ROUNDS; i += 1) {
    git('reset', '-q', '--hard', a);
    const start = performance.now();
    git('merge', '-q', '--no-edit', 'b');
    if (i >= 0) samples.push(performance.now() - start);
  }
  return { ms: round(median(samples), 1) };
}

/** A 1,000-call stored session, the inspector serving it, Chromium opening the page: paint times. */
async function inspectorPaint() {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    return { skipped: 'playwright-core is not installed' };
  }
  const CALLS = 1_000;
  const dir = join(scratch, 'store');
  const session = await createSession({ store: localSessionStore({ dir, fsync: false }), sessionId: 'long' });
  const built = performance.now();
  for (let call = 0; call < CALLS; call += 1) await session.runTool(writeMany, { paths: [`src/file${call % 50}.ts`], tag: `call ${call}` });
  await session.dispose();
  const buildMs = performance.now() - built;

  const child = spawn(process.execPath, [CLI, 'inspect', '--store-dir', dir, '--session', 'long'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`inspect exited ${code}`)));
  });
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox'],
    });
  } catch (error) {
    child.kill('SIGTERM');
    return { skipped: `no browser could launch: ${error.message.split('\n')[0]}` };
  }
  const samples = [];
  for (let i = -1; i < ROUNDS; i += 1) {
    const page = await browser.newPage();
    await page.goto(url);
    await page.locator('.op[data-op="op-1000"]').waitFor();
    // The paint after the timeline's rows went in: the next animation frame after the mark.
    const figures = await page.evaluate(
      () =>
        new Promise((resolve) =>
          requestAnimationFrame(() =>
            setTimeout(() => {
              const paint = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null;
              const rendered = performance.getEntriesByName('timeline-rendered')[0]?.startTime ?? null;
              resolve({ firstContentfulPaint: paint, timelinePainted: rendered, rows: document.querySelectorAll('.op').length });
            }, 0),
          ),
        ),
    );
    if (i >= 0) samples.push(figures);
    await page.close();
  }
  await browser.close();
  const stopped = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await stopped;
  const rows = samples[0].rows;
  return {
    calls: CALLS,
    rows,
    buildSessionMs: round(buildMs, 0),
    firstContentfulPaintMs: round(median(samples.map((s) => s.firstContentfulPaint)), 0),
    timelinePaintedMs: round(median(samples.map((s) => s.timelinePainted)), 0),
    goalMs: 1000,
  };
}

try {
  const undoRedoFigures = await undoRedo();
  const blameFigures = await blame();
  const mergeFigures = await merge();
  const paint = await inspectorPaint();
  const result = {
    bench: 'history',
    undoRedo: undoRedoFigures,
    blame: blameFigures,
    merge: { ...mergeFigures, vsGitMerge: mergeFigures.git === null ? null : round(mergeFigures.ms / mergeFigures.git.ms, 3) },
    inspector: paint,
    goalsMet: {
      undo: undoRedoFigures.undoMs <= 5 && undoRedoFigures.redoMs <= 5,
      blame: blameFigures.ms <= 50,
      merge: mergeFigures.ms <= 100,
      inspectorFirstPaint: paint.timelinePaintedMs === undefined ? null : paint.timelinePaintedMs <= 1000,
    },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 5 });
}
