import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/host-files/sandbox.js';
import { pinSearchDirectory, walkTree } from '../../src/host-files/walk.js';
import { walkBatches, type DriverWalkEntry } from '../../src/workspace/driver.js';
import { scratch } from './support.js';

/** Descriptors this process holds on directories under `root` (the walk's pins). */
function openUnder(root: string): string[] {
  const held: string[] = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (target === root || target.startsWith(`${root}/`)) held.push(target);
    } catch {
      // closed meanwhile (the descriptor readdirSync itself used)
    }
  }
  return held;
}

/** Every entry under `dir` by a plain recursive listing, as the walk reports it. */
function plainWalk(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    out.push(`${path} ${entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'file'}`);
    if (entry.isDirectory()) out.push(...plainWalk(root, path));
  }
  return out;
}

describe.skipIf(!fs.existsSync('/proc/self/fd'))('host walk', () => {
  const { dir } = scratch();

  /** 30 directories of 12 subdirectories (390 in all, more than the walk pins ahead), a file in each, and links. */
  function wideTree() {
    const root = dir();
    for (let i = 0; i < 30; i += 1) {
      for (let j = 0; j < 12; j += 1) {
        fs.mkdirSync(join(root, `d${i}`, `e${j}`), { recursive: true });
        fs.writeFileSync(join(root, `d${i}`, `e${j}`, 'f.txt'), 'x');
      }
    }
    fs.symlinkSync('d0', join(root, 'link-to-dir'));
    fs.symlinkSync('/etc', join(root, 'link-out'));
    return root;
  }

  it('reports every entry once, descending through directories only, however many it lists at once', async () => {
    const root = wideTree();
    const walked: string[] = [];
    for await (const entry of walkTree(new Sandbox(root), '')) walked.push(`${entry.path} ${entry.kind}`);
    expect(walked.sort()).toEqual(plainWalk(root).sort());
    expect(walked).toHaveLength(30 + 30 * 12 * 2 + 2);
    expect(openUnder(root)).toEqual([]);
  });

  it('closes every directory it opened when the caller stops early', async () => {
    const root = wideTree();
    for (const stopAfter of [1, 50, 400]) {
      let seen = 0;
      for await (const _ of walkTree(new Sandbox(root), '')) if ((seen += 1) >= stopAfter) break;
      await new Promise((resolve) => setTimeout(resolve, 100)); // listings still under way settle and close
      expect(openUnder(root), `stopped after ${stopAfter}`).toEqual([]);
    }
  });

  it('pins for a search the directory a path names when asked, never one a paused walk listed and the host moved out', async () => {
    const base = dir();
    const root = join(base, 'root');
    const outside = join(base, 'outside');
    fs.mkdirSync(join(root, 'd'), { recursive: true });
    fs.writeFileSync(join(root, 'd', 'f'), 'inside, listed');
    const sandbox = new Sandbox(root);
    const walk = walkTree(sandbox, '').batches()[Symbol.asyncIterator]();
    const first = await walk.next(); // the walk waits here: its caller has not asked for more
    expect((first.value as DriverWalkEntry[]).map((entry) => entry.path)).toContain('d/f');
    fs.renameSync(join(root, 'd'), outside);
    fs.writeFileSync(join(outside, 'f'), 'outside the root');
    fs.mkdirSync(join(root, 'd'));
    fs.writeFileSync(join(root, 'd', 'f'), 'inside, now');
    const pin = pinSearchDirectory(sandbox, 'd');
    try {
      expect(fs.readFileSync(`${pin?.path}/f`, 'utf8')).toBe('inside, now');
    } finally {
      pin?.release();
      await walk.return?.(undefined);
    }
  });

  it('lists synchronously in slices, serving the event loop between them', async () => {
    const root = dir();
    for (let i = 0; i < 1500; i += 1) fs.mkdirSync(join(root, `d${i}`, 'e'), { recursive: true });
    let turns = -1; // counted from the first entry on: opening the walk waits for the disk anyway
    let walking = true;
    const turn = (): void => {
      if (!walking) return;
      if (turns >= 0) turns += 1;
      setImmediate(turn);
    };
    setImmediate(turn);
    let walked = 0;
    for await (const _ of walkTree(new Sandbox(root), '')) if ((walked += 1) === 1) turns = 0;
    walking = false;
    expect(walked).toBe(3000);
    expect(turns).toBeGreaterThan(0);
    expect(openUnder(root)).toEqual([]);
  });

  it('hands the same entries over a slice at a time to glob and grep (walkBatches), and groups a plain walk', async () => {
    const root = wideTree();
    const one: string[] = [];
    for await (const entry of walkTree(new Sandbox(root), '')) one.push(entry.path);
    const batched: string[] = [];
    for await (const batch of walkBatches(walkTree(new Sandbox(root), ''))) batched.push(...batch.map((entry) => entry.path));
    expect(batched).toEqual(one);
    // A wrapper that filters a walk (the policy's view) hands over a plain iterable: its entries, grouped, nothing else.
    async function* filtered(): AsyncGenerator<DriverWalkEntry> {
      for await (const entry of walkTree(new Sandbox(root), '')) if (!entry.path.startsWith('d1')) yield entry;
    }
    const sizes: number[] = [];
    const kept: string[] = [];
    for await (const batch of walkBatches(filtered())) {
      sizes.push(batch.length);
      kept.push(...batch.map((entry) => entry.path));
    }
    expect(kept).toEqual(one.filter((path) => !path.startsWith('d1')));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(256);
    expect(openUnder(root)).toEqual([]);
  });
});
