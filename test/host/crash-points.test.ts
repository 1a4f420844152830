import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { GitStore } from '../../src/backends/host/git/store.js';
import { isTempName } from '../../src/backends/host/index.js';
import type { WorkspaceSnapshot } from '../../src/workspace/types.js';
import { filesOf } from '../support/host-files.js';
import { gitEnv, scratch, hostOf } from './support.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';

/**
 * SIGKILL at random points of a loop that writes, deletes, snapshots, restores and exports
 * (fixtures/crash-loop-child.mjs), many times over the same root and git dir. After every kill a fresh
 * workspace in this process opens them and must restore the last snapshot the child completed exactly,
 * every snapshot ref must reach a whole commit, `git fsck` must pass, and no exported file may be torn.
 * The kill delays come from a seeded generator: `SESSIONFS_CRASH_POINTS` and `SESSIONFS_CRASH_SEED` run
 * more or others.
 */
const KILL_POINTS = Number(process.env.SESSIONFS_CRASH_POINTS ?? 20);
const SEED = Number(process.env.SESSIONFS_CRASH_SEED ?? 1125);

interface JournalEntry {
  record: WorkspaceSnapshot;
  files: Record<string, string>;
}

function journalEntries(journal: string): JournalEntry[] {
  if (!fs.existsSync(journal)) return [];
  return fs
    .readFileSync(journal, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as JournalEntry];
      } catch {
        return [];
      }
    });
}

/** Files under `dir` with their text; temp files of interrupted atomic writes are counted apart. */
function rootState(dir: string): { files: Record<string, string>; temps: number } {
  const files: Record<string, string> = {};
  let temps = 0;
  for (const [path, described] of Object.entries(filesOf(dir))) {
    if (isTempName(basename(path))) temps += 1;
    else files[path] = Buffer.from(described.replace(/^file \d+ /, ''), 'latin1').toString('utf8');
  }
  return { files, temps };
}

describe('host workspace killed at random points of write, snapshot, restore and export', () => {
  const { dir } = scratch();
  let child = '';

  beforeAll(() => {
    child = fileURLToPath(new URL('./fixtures/crash-loop-child.mjs', import.meta.url));
    if (!fs.existsSync(fileURLToPath(new URL('../../dist/src/index.js', import.meta.url)))) {
      throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test');
    }
  });

  it(`restores the last completed snapshot exactly after each of ${KILL_POINTS} kills, with git consistent`, async () => {
    const root = dir();
    const gitDir = dir('sessionfs-crash-git-');
    const work = dir('sessionfs-crash-work-');
    const journal = join(work, 'journal.jsonl');
    const exportDir = join(work, 'export');
    let state = SEED >>> 0;
    const nextDelay = (): number => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return 10 + (state % 400);
    };
    let leftoverTemps = 0;
    let sweptTemps = 0;
    let restoredChecks = 0;

    for (let kill = 0; kill < KILL_POINTS; kill += 1) {
      const proc = spawn(process.execPath, [child, root, gitDir, journal, exportDir, String(SEED + kill)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        proc.stdout.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('go')) resolve();
        });
        void exited.then((code) => reject(new Error(`child exited early with ${code}`)));
      });
      await new Promise((resolve) => setTimeout(resolve, nextDelay()));
      proc.kill('SIGKILL');
      await exited;

      // Every ref reaches a whole commit, and git itself finds the repository consistent.
      const store = new GitStore(gitDir);
      for (const name of fs.readdirSync(join(gitDir, 'refs', 'sessionfs')).filter((n) => !n.endsWith('.lock'))) {
        const commit = await store.resolveRef(`refs/sessionfs/${name}`);
        expect(commit, `ref ${name}`).toMatch(/^[0-9a-f]{40}$/);
        expect(await store.readCommit(commit!), `commit of ${name}`).toBeDefined();
      }
      execFileSync('git', ['--git-dir', gitDir, 'fsck', '--full', '--no-dangling', '--no-progress'], { env: gitEnv, stdio: 'pipe' });

      // No exported file is torn: each ends with the marker every written content ends with.
      if (fs.existsSync(exportDir)) {
        // (An export's own temp files, `.sessionfs-export-<owner>-<hex>`, are the unfinished ones: renamed into place once whole.)
        for (const [path, content] of Object.entries(rootState(exportDir).files))
          if (!basename(path).startsWith('.sessionfs-export-')) expect(content.endsWith(':end'), `export ${path}`).toBe(true);
      }

      // A fresh workspace on the same root and git dir restores the last completed snapshot exactly.
      const entries = journalEntries(journal);
      if (entries.length === 0) continue;
      const last = entries.at(-1)!;
      // What the kill left of interrupted writes, removed by the next workspace that opens the root.
      leftoverTemps += rootState(root).temps;
      const ws = createWorkspace(hostDriver({ root, gitDir }));
      try {
        sweptTemps += (await hostOf(ws).tempFilesSwept).length;
        await ws.restore(last.record);
        const { files, temps } = rootState(root);
        expect(files).toEqual(last.files);
        expect(temps).toBe(0);
        expect(await ws.diff(last.record)).toEqual([]);
        restoredChecks += 1;
      } finally {
        await ws.dispose();
      }
    }
    const snapshots = journalEntries(journal).length;
    console.log(
      `crash points: ${KILL_POINTS} kills (seed ${SEED}), ${restoredChecks} exact restores checked, ${snapshots} snapshots completed, ${leftoverTemps} temp files of killed writes seen (hidden from the workspace), ${sweptTemps} removed by the next open`,
    );
    expect(restoredChecks).toBeGreaterThan(KILL_POINTS / 2);
    expect(sweptTemps).toBe(leftoverTemps);
  }, 600_000);
});
