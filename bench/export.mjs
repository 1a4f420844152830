#!/usr/bin/env node
// Work leaving the workspace, side by side with native git in the same run, on a real tree (the first
// [files] files of this project's node_modules, default 10,000; see _corpus.mjs) with [changed] files
// changed (default 100: 90 edited, 5 added, 5 deleted), on the memory and the host backend:
// - patch(from, to) between two snapshots against `git diff --binary --full-index A B` between the same
//   two trees as commits, and patch(from) against the live state against `git diff --binary --full-index A`
//   (the worktree holding the new tree). Every patch is checked: `git apply --check`, then applied to a
//   copy of the `from` tree and compared file by file with the new tree.
// - exportTo(workspace, dir, { from }) into a copy of the `from` tree against `git apply --binary` of the
//   same change to the same copy (and against `git diff | git apply`, which also finds the change). The
//   destination is compared with the new tree after every run and put back (untimed) before the next.
// - fork() of a memory workspace at 1k / 10k / 100k files (O(1): flat), against copying the workspace file by
//   file into a new one; HostWorkspace at [files] files against `cp -r` of the root.
// The host runs twice: with the default change detection (the live state is found by a scan of the root,
// as `git diff` against the worktree stats it) and with changeDetection: 'tracked' (`hostTracked`: protocol
// writes are known, so the live state needs no scan). Set TMPDIR to put the trees on another filesystem.
// Prints one JSON document; `ratio` is sessionfs ms / native ms (goal for patch and export: <= 2).
// Usage: node bench/export.mjs [files] [changed]   (after `npm run build`; ROUNDS=5, FORK_SIZES=1000,10000,100000)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createWorkspace, hostDriver, memoryDriver } from '../dist/src/index.js';
import { exportTo } from '../dist/src/entries/export.js';
import { copyCorpus } from './_corpus.mjs';
import { hasNativeGit, nativeGitEnv } from './_native-git.mjs';
import { median, round, time } from './_timing.mjs';

const FILES = Number(process.argv[2] ?? 10_000);
const CHANGED = Number(process.argv[3] ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const FORK_SIZES = (process.env.FORK_SIZES ?? '1000,10000,100000').split(',').map(Number);
const FORK_ROUNDS = Number(process.env.FORK_ROUNDS ?? 200);

const scratch = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'sessionfs-bench-export-')));
const gitEnv = nativeGitEnv(scratch);
if (!hasNativeGit(gitEnv)) {
  console.error('export bench: needs a git binary (the figures are ratios against native git)');
  process.exit(1);
}
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: gitEnv, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
const copyTree = (from, to) => execFileSync('cp', ['-r', from, to]);

/** Every regular file below `dir` (relative, `/`-separated, sorted). */
function filesBelow(dir) {
  const out = [];
  const visit = (abs) => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const child = join(abs, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (entry.isFile()) out.push(relative(dir, child).split('\\').join('/'));
    }
  };
  visit(dir);
  return out.sort();
}

/** Throws unless `actual` holds the same files with the same bytes as `expected` (and exec bits with `modes`). */
function sameTree(actual, expected, what, modes) {
  const [a, b] = [filesBelow(actual), filesBelow(expected)];
  if (a.join('\n') !== b.join('\n')) throw new Error(`${what}: ${a.length} files, expected ${b.length}`);
  for (const path of a) {
    const [x, y] = [join(actual, path), join(expected, path)];
    if (!fs.readFileSync(x).equals(fs.readFileSync(y))) throw new Error(`${what}: ${path} differs`);
    if (modes && (fs.statSync(x).mode & 0o111) !== (fs.statSync(y).mode & 0o111)) throw new Error(`${what}: ${path} mode differs`);
  }
}

/**
 * The change: `changed` files, 90% edited in place (a line inserted in the middle and one appended), 5%
 * added beside them, 5% deleted; spread evenly over the tree, regular non-executable files under 256 KiB.
 */
function planChanges(root, changed) {
  const candidates = filesBelow(root).filter((path) => {
    const info = fs.statSync(join(root, path));
    return info.size < 256 * 1024 && (info.mode & 0o111) === 0;
  });
  const added = Math.max(1, Math.round(changed * 0.05));
  const deleted = added;
  const edited = changed - added - deleted;
  const step = Math.floor(candidates.length / (edited + deleted));
  const picked = Array.from({ length: edited + deleted }, (_, i) => candidates[i * step]);
  const changes = [];
  for (const [i, path] of picked.entries()) {
    if (i >= edited) {
      changes.push({ path, bytes: undefined });
      continue;
    }
    const old = fs.readFileSync(join(root, path));
    const cut = old.indexOf(10, Math.floor(old.length / 2)) + 1 || old.length;
    const bytes = Buffer.concat([
      old.subarray(0, cut),
      Buffer.from(`// edited by the agent ${i}\n`),
      old.subarray(cut),
      Buffer.from(`// end ${i}\n`),
    ]);
    changes.push({ path, bytes });
  }
  for (let i = 0; i < added; i += 1) {
    const dir = picked[i].includes('/') ? picked[i].slice(0, picked[i].lastIndexOf('/') + 1) : '';
    changes.push({ path: `${dir}added-by-agent-${i}.md`, bytes: Buffer.from(`# added ${i}\n\n${'a new line\n'.repeat(20 + i)}`) });
  }
  return changes;
}

async function applyToWorkspace(workspace, changes) {
  for (const { path, bytes } of changes) {
    if (bytes === undefined) await workspace.delete(path);
    else await workspace.writeBytes(path, bytes);
  }
}

function applyToDirectory(root, changes) {
  for (const { path, bytes } of changes) {
    if (bytes === undefined) fs.rmSync(join(root, path));
    else fs.writeFileSync(join(root, path), bytes);
  }
}

const ratioRow = (ours, theirs, digits = 1) => ({
  sessionfsMs: round(ours, digits),
  nativeGitMs: round(theirs, digits),
  ratio: round(ours / theirs, 2),
});

try {
  const corpus = join(scratch, 'from'); // the `from` tree, never changed
  const tree = copyCorpus(corpus, FILES);
  const changes = planChanges(corpus, CHANGED);

  // ---- native git: the two trees as commits A and B, the worktree holding B ----
  const native = join(scratch, 'native');
  copyTree(corpus, native);
  git(native, 'init', '-q');
  git(native, 'config', 'gc.auto', '0'); // no background repacking during the timings
  git(native, 'add', '-A');
  git(native, 'commit', '-q', '--no-verify', '-m', 'from');
  const A = git(native, 'rev-parse', 'HEAD').toString().trim();
  applyToDirectory(native, changes);
  git(native, 'add', '-A');
  git(native, 'commit', '-q', '--no-verify', '-m', 'to');
  const B = git(native, 'rev-parse', 'HEAD').toString().trim();
  const nativeTrees = await time(() => git(native, 'diff', '--binary', '--full-index', A, B), ROUNDS);
  const nativeLive = await time(() => git(native, 'diff', '--binary', '--full-index', A), ROUNDS);
  const nativePatch = join(scratch, 'native.patch');
  fs.writeFileSync(nativePatch, nativeTrees.output);
  const expected = join(scratch, 'expected'); // B as plain files
  copyTree(corpus, expected);
  applyToDirectory(expected, changes);

  /** Applies a patch to a fresh copy of the `from` tree and compares the result with B. */
  function checkPatch(patch, what, modes) {
    const file = join(scratch, 'check.patch');
    const dir = join(scratch, 'check');
    fs.writeFileSync(file, patch);
    fs.rmSync(dir, { recursive: true, force: true });
    copyTree(corpus, dir);
    git(dir, 'apply', '--check', '--binary', file);
    git(dir, 'apply', '--binary', file);
    sameTree(dir, expected, what, modes);
    fs.rmSync(dir, { recursive: true, force: true });
    return true;
  }

  // ---- export destinations: copies of the `from` tree, put back after each run with the reverse patch ----
  const destination = join(scratch, 'destination');
  copyTree(corpus, destination);
  let dirty = false;
  const putBack = () => {
    if (dirty) git(destination, 'apply', '-R', '--binary', nativePatch);
    dirty = false;
  };
  const nativeApply = await time(
    () => {
      dirty = true;
      git(destination, 'apply', '--binary', nativePatch);
    },
    ROUNDS,
    putBack,
  );
  sameTree(destination, expected, 'git apply', true);
  const nativeDiffApply = await time(
    () => {
      dirty = true;
      const patch = git(native, 'diff', '--binary', '--full-index', A);
      execFileSync('git', ['apply', '--binary', '-'], { cwd: destination, env: gitEnv, input: patch });
    },
    ROUNDS,
    putBack,
  );
  sameTree(destination, expected, 'git diff | git apply', true);

  async function backend(name, workspace) {
    const from = await workspace.snapshot();
    await applyToWorkspace(workspace, changes);
    const to = await workspace.snapshot();
    const trees = await time(() => workspace.patch(from, to), ROUNDS);
    const live = await time(() => workspace.patch(from), ROUNDS);
    if (trees.output !== live.output) throw new Error(`${name}: the live patch differs from the snapshot patch`);
    const modes = name === 'host';
    checkPatch(trees.output, `${name} patch`, modes);
    const exported = await time(
      async () => {
        dirty = true;
        return exportTo(workspace, destination, { allowedHostRoots: [scratch], from });
      },
      ROUNDS,
      putBack,
    );
    sameTree(destination, expected, `${name} exportTo`, modes);
    putBack();
    if (exported.output.written.length + exported.output.deleted.length !== changes.length)
      throw new Error(`${name} exportTo: ${exported.output.written.length} written, ${exported.output.deleted.length} deleted`);
    // Git adds the enclosing function's line after a hunk's `@@ … @@`; apart from that the bytes are compared.
    const identical = trees.output === nativeTrees.output.toString().replace(/^(@@ [^@\n]* @@).*$/gm, '$1');
    return {
      patchBetweenSnapshots: { ...ratioRow(trees.ms, nativeTrees.ms), versus: 'git diff --binary --full-index A B' },
      patchOfLiveState: { ...ratioRow(live.ms, nativeLive.ms), versus: 'git diff --binary --full-index A (worktree)' },
      patchBytes: trees.output.length,
      patchAppliesExactly: true,
      patchIdenticalToGitBarHunkFunctionNames: identical,
      exportTo: { ...ratioRow(exported.ms, nativeApply.ms), versus: 'git apply --binary (the same change, a copy of A)' },
      exportToVersusDiffAndApply: { ...ratioRow(exported.ms, nativeDiffApply.ms), versus: 'git diff A | git apply --binary' },
      exported: {
        written: exported.output.written.length,
        deleted: exported.output.deleted.length,
        conflicts: exported.output.conflicts.length,
      },
    };
  }

  // ---- memory: the tree written through the protocol ----
  const memory = createWorkspace(memoryDriver());
  for (const path of filesBelow(corpus)) await memory.writeBytes(path, fs.readFileSync(join(corpus, path)));
  const memoryResult = await backend('memory', memory);
  await memory.dispose();

  // ---- host: a copy of the tree as the root ----
  const hostRoot = join(scratch, 'host-root');
  copyTree(corpus, hostRoot);
  const host = createWorkspace(hostDriver({ root: hostRoot }));
  const hostResult = await backend('host', host);

  // ---- host with changeDetection: 'tracked' (the changes are protocol writes: the live state needs no scan) ----
  const trackedRoot = join(scratch, 'tracked-root');
  copyTree(corpus, trackedRoot);
  const tracked = createWorkspace(hostDriver({ root: trackedRoot, changeDetection: 'tracked' }));
  const trackedResult = await backend('host', tracked);
  await tracked.dispose();
  fs.rmSync(trackedRoot, { recursive: true, force: true });

  // ---- host fork against cp -r of the same root ----
  let fork;
  const dropFork = async () => {
    await fork?.dispose();
    fork = undefined;
  };
  const hostFork = await time(async () => (fork = await host.fork()), ROUNDS, dropFork);
  sameTree(fork.root, hostRoot, 'host fork', true);
  await dropFork();
  const copy = join(scratch, 'cp-copy');
  const cp = await time(
    () => copyTree(hostRoot, copy),
    ROUNDS,
    () => fs.rmSync(copy, { recursive: true, force: true }),
  );
  await host.dispose();

  // ---- memory fork at growing sizes, against a file-by-file copy into a new workspace ----
  const forks = [];
  for (const size of FORK_SIZES) {
    const ws = createWorkspace(memoryDriver());
    const pathOf = (i) => `src/d${i % 100}/sub${Math.floor(i / 100) % 10}/file${i}.ts`;
    for (let i = 0; i < size; i += 1) await ws.writeBytes(pathOf(i), new TextEncoder().encode(`export const value${i} = ${i};\n`));
    const first = await ws.snapshot();
    await ws.write(pathOf(0), 'changed\n');
    await ws.snapshot();
    const samples = [];
    const kept = [];
    for (let i = -1; i < FORK_ROUNDS; i += 1) {
      const start = performance.now();
      const forked = ws.fork();
      if (i >= 0) samples.push(performance.now() - start);
      kept.push(forked);
    }
    // The fork is independent and holds the parent's history.
    const probe = kept[0];
    await probe.write(pathOf(1), 'only in the fork\n');
    if ((await ws.read(pathOf(1))).content === 'only in the fork') throw new Error('memory fork shares content');
    await probe.restore(first);
    for (const forked of kept) await forked.dispose();
    const copyStart = performance.now();
    const copied = createWorkspace(memoryDriver());
    for (let i = 0; i < size; i += 1) await copied.writeBytes(pathOf(i), (await ws.readBytes(pathOf(i))).content);
    const copyMs = performance.now() - copyStart;
    await copied.dispose();
    await ws.dispose();
    forks.push({ files: size, forkMs: round(median(samples), 4), copyIntoNewWorkspaceMs: round(copyMs, 1) });
  }

  console.log(
    JSON.stringify(
      {
        bench: 'export',
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        corpus: { files: tree.files, megabytes: round(tree.bytes / 1024 / 1024) },
        changed: {
          files: changes.length,
          edited: changes.filter((c) => c.bytes !== undefined && fs.existsSync(join(corpus, c.path))).length,
        },
        rounds: ROUNDS,
        goal: 'patch and exportTo within 2x of native git (ratio <= 2)',
        memory: memoryResult,
        host: hostResult,
        hostTracked: trackedResult,
        fork: {
          memory: { sizes: forks, ratioLargestToSmallest: round(forks.at(-1).forkMs / forks[0].forkMs, 2), goal: 'O(1): flat' },
          host: {
            files: tree.files,
            forkMs: round(hostFork.ms),
            cpMs: round(cp.ms),
            ratio: round(hostFork.ms / cp.ms, 2),
            versus: 'cp -r of the root (the fork also makes its git dir and borrows the snapshot objects)',
          },
        },
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
