import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { PIN_DIRECTORIES, Sandbox } from '../../src/host-files/sandbox.js';
import { pinSearchDirectory, walkTree } from '../../src/host-files/walk.js';
import { scratch } from '../host/support.js';

/** This process's open descriptors: every one, and those on paths under `root`. */
function descriptors(root: string): { all: number; under: string[] } {
  const names = fs.readdirSync('/proc/self/fd');
  const under: string[] = [];
  for (const fd of names) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (target === root || target.startsWith(`${root}/`)) under.push(target);
    } catch {
      // closed meanwhile (the descriptor readdirSync itself used)
    }
  }
  return { all: names.length, under };
}

/**
 * Grep reads a directory's files through the descriptor the walk listed it with, held until the search's
 * batches are done with it, rather than pinning the directory again by its path.
 */
describe.skipIf(!PIN_DIRECTORIES)('search reuses the walk’s directory pins', () => {
  const { dir, workspace } = scratch();

  it('hands the search the very directory the walk listed, not what stands at its path later', async () => {
    const root = dir();
    fs.mkdirSync(join(root, 'd'));
    fs.writeFileSync(join(root, 'd', 'f.txt'), 'listed\n');
    const sandbox = new Sandbox(root);
    const slices = walkTree(sandbox, '').batches()[Symbol.asyncIterator]();
    const first = await slices.next();
    expect(first.value).toContainEqual({ path: 'd/f.txt', kind: 'file' });
    // Swapped after the walk listed it: the search must read what the walk reported.
    fs.renameSync(join(root, 'd'), join(root, 'd-listed'));
    fs.mkdirSync(join(root, 'd'));
    fs.writeFileSync(join(root, 'd', 'f.txt'), 'swapped in\n');
    const pin = pinSearchDirectory(sandbox, 'd');
    expect(pin).toBeDefined();
    expect(fs.readFileSync(`${pin?.path}/f.txt`, 'utf8')).toBe('listed\n');
    // The walk moves on: its pin stays open for the search's holder alone, and closes when it lets go.
    expect((await slices.next()).done).toBe(true);
    expect(fs.readFileSync(`${pin?.path}/f.txt`, 'utf8')).toBe('listed\n');
    pin?.release();
    pin?.release(); // once only: the number may belong to another file by now
    expect(descriptors(root).under).toEqual([]);
    // Once the walk is past it, a directory is pinned by its path again.
    const later = pinSearchDirectory(sandbox, 'd');
    expect(fs.readFileSync(`${later?.path}/f.txt`, 'utf8')).toBe('swapped in\n');
    later?.release();
    expect(descriptors(root).under).toEqual([]);
  });

  it('closes every descriptor once, whether grep completes, stops at maxMatches, passes its deadline or is aborted', async () => {
    const root = dir();
    // More directories than the walk pins ahead or lists in one slice, two small files each.
    for (let i = 0; i < 600; i += 1) {
      fs.mkdirSync(join(root, `d${i}`));
      fs.writeFileSync(join(root, `d${i}`, 'a.txt'), `TODO ${i}\n`);
      fs.writeFileSync(join(root, `d${i}`, 'b.txt'), `${'a'.repeat(40)}!\nTODO\n`);
    }
    const ws = workspace({ root });
    expect(await ws.grep('TODO', { maxMatches: 10_000 })).toHaveLength(1200); // the worker pool started
    // Batches release their pins as they settle, which may be just after grep answers.
    const settled = async (): Promise<void> => {
      await vi.waitFor(() => expect(descriptors(root).under).toEqual([]), { timeout: 5_000, interval: 20 });
    };
    await settled();
    const before = descriptors(root).all;

    expect(await ws.grep('TODO', { maxMatches: 10_000 })).toHaveLength(1200);
    await settled();
    expect(await ws.grep('TODO', { maxMatches: 3 })).toHaveLength(3);
    await settled();
    await expect(ws.grep('^(a+)+$', { timeoutMs: 200 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    await settled();
    for (const delay of [0, 2, 10]) {
      const controller = new AbortController();
      const pending = ws.grep('TODO', { signal: controller.signal, maxMatches: 10_000 });
      setTimeout(() => controller.abort(), delay);
      await pending.catch(() => undefined); // aborted, or done before the abort
      await settled();
    }
    expect(await ws.grep('TODO \\d+$', { maxMatches: 10_000 })).toHaveLength(600);
    await settled();
    expect(descriptors(root).all).toBeLessThanOrEqual(before);
  });
});
