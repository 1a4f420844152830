import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { GitStore } from '../../src/backends/host/git/store.js';
import { scratch } from './support.js';

/**
 * A process killed with SIGKILL in the middle of a snapshot must leave a git dir that still works: objects
 * are written (temp file + rename) before the ref that reaches them moves, so every ref that exists points
 * at a complete commit, and a new workspace on the same root and git dir snapshots and restores.
 */
describe('host snapshots survive SIGKILL mid-snapshot', () => {
  const { workspace, dir } = scratch();
  let child = '';

  beforeAll(() => {
    // The child is a separate Node process, so it runs the built library: `npm test` builds first.
    child = fileURLToPath(new URL('./fixtures/crash-child.mjs', import.meta.url));
    if (!fs.existsSync(fileURLToPath(new URL('../../dist/src/index.js', import.meta.url)))) {
      throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test');
    }
  });

  async function runAndKill(root: string, gitDir: string, phase: string, delayMs: number): Promise<void> {
    const proc = spawn(process.execPath, [child, root, gitDir, phase], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('go')) resolve();
      });
      proc.on('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  /** Every snapshot ref resolves to a commit whose whole tree can be read. */
  async function checkRefs(gitDir: string): Promise<number> {
    const store = new GitStore(gitDir);
    const refsDir = join(gitDir, 'refs', 'sessionfs');
    const names = fs.existsSync(refsDir) ? fs.readdirSync(refsDir).filter((n) => !n.endsWith('.lock')) : [];
    const seen = new Set<string>();
    for (const name of names) {
      const commit = await store.resolveRef(`refs/sessionfs/${name}`);
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      const info = await store.readCommit(commit as string);
      expect(info).toBeDefined();
      const walk = async (tree: string): Promise<void> => {
        for (const entry of await store.readTree(tree)) {
          if (seen.has(entry.oid)) continue;
          seen.add(entry.oid);
          if (entry.mode === '40000') await walk(entry.oid);
          else await store.readBlob(entry.oid);
        }
      };
      await walk(info!.tree);
    }
    return names.length;
  }

  it('keeps every ref complete, and a new workspace snapshots and restores exactly afterwards', async () => {
    const root = dir();
    const gitDir = dir('sessionfs-crash-git-');
    for (let i = 0; i < 3000; i += 1) {
      if (i < 10) fs.mkdirSync(join(root, `d${i}`));
      fs.writeFileSync(join(root, `d${i % 10}`, `f${i}.txt`), `file ${i}\n`.repeat(10));
    }
    const kills: Array<[string, number]> = [
      ['fresh', 15],
      ['incremental', 40],
      ['fresh', 60],
      ['incremental', 120],
      ['incremental', 250],
    ];
    for (const [phase, delay] of kills) await runAndKill(root, gitDir, phase, delay);
    const refs = await checkRefs(gitDir);
    expect(refs).toBeGreaterThan(0);

    const ws = workspace({ root, gitDir });
    const before = await ws.snapshot();
    const expected = fs.readFileSync(join(root, 'd3', 'f3.txt'), 'utf8');
    const d4 = fs.readdirSync(join(root, 'd4')).sort();
    await ws.write('d3/f3.txt', 'after the crash');
    await ws.delete('d4', { recursive: true });
    await ws.write('added.txt', 'added');
    await ws.restore(before);
    expect(fs.readFileSync(join(root, 'd3', 'f3.txt'), 'utf8')).toBe(expected);
    expect(fs.readdirSync(join(root, 'd4')).sort()).toEqual(d4);
    expect(fs.existsSync(join(root, 'added.txt'))).toBe(false);
    expect(await ws.diff(before)).toEqual([]);
  }, 180_000); // five child processes, each writing and hashing 3,000 files: slow on a loaded machine
});
