import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { tempDirs } from '../../src/testing/harness.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { aheadBatchFiles, IN_FLIGHT } from '../../src/workspace/search/batch.js';
import { matchPool } from '../../src/workspace/search/match-pool.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

const tempDir = tempDirs({ prefix: 'sessionfs-scan-ahead-', until: 'file' });

/**
 * A tree whose walk order (breadth first) is far from the answer's order (by path): files at every depth,
 * names that sort around the separator (`a`, `a-b`, `a/…`), several matching lines per file, and more files
 * than one worker batch holds.
 */
function treeFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const body = (i: number) => `TODO one ${i}\nnothing\nTODO two ${i}\n${i % 3 === 0 ? 'TODO three\n' : ''}`;
  let i = 0;
  for (const top of ['a', 'a-b', 'b', 'z']) {
    files.set(`${top}.txt`, body(i++));
    for (let d = 0; d < 6; d += 1) {
      files.set(`${top}/f${d}.txt`, body(i++));
      for (let k = 0; k < 40; k += 1) files.set(`${top}/d${d}/deep/k${k}.txt`, body(i++));
    }
  }
  return files;
}

async function both(): Promise<{ host: SnapshotableWorkspace; memory: SnapshotableWorkspace }> {
  const root = tempDir();
  const memory = createWorkspace(memoryDriver());
  for (const [path, text] of treeFiles()) {
    fs.mkdirSync(join(root, path, '..'), { recursive: true });
    fs.writeFileSync(join(root, path), text);
    await memory.write(path, text);
  }
  return { host: createWorkspace(hostDriver({ root })), memory };
}

describe('grep matches files while the walk still runs (host)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('sends files to the workers before the walk is done', async () => {
    const { host, memory } = await both();
    const order: string[] = [];
    const real = matchPool.matchLines.bind(matchPool);
    vi.spyOn(matchPool, 'matchLines').mockImplementation((...args) => {
      order.push('job');
      return real(...args);
    });
    const matches = await host.grep('TODO', {
      maxMatches: 100_000,
      onProgress: (progress) => {
        if (progress.phase === 'search' && !order.includes('search')) order.push('search');
      },
    });
    expect(order.indexOf('job')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('job')).toBeLessThan(order.indexOf('search')); // a job went out while the walk ran
    expect(matches).toEqual(await memory.grep('TODO', { maxMatches: 100_000 }));
    await host.dispose();
    await memory.dispose();
  });

  it('answers as a search in path order does, whatever maxMatches cuts', async () => {
    const { host, memory } = await both();
    for (const maxMatches of [1, 2, 3, 7, 100, 255, 256, 257, 600, 2000, 100_000]) {
      for (const pattern of ['TODO', 'TODO t\\w+', 'three']) {
        const expected = await memory.grep(pattern, { maxMatches });
        expect(await host.grep(pattern, { maxMatches })).toEqual(expected);
      }
    }
    expect(await host.grep('TODO', { maxMatches: 5, path: 'a-b' })).toEqual(await memory.grep('TODO', { maxMatches: 5, path: 'a-b' }));
    await host.dispose();
    await memory.dispose();
  });

  it('matches the last, partly filled batch with those in flight: the sorted scan after the walk has nothing left', async () => {
    const root = tempDir();
    for (let i = 0; i < 5; i += 1) fs.writeFileSync(join(root, `f${i}.txt`), `nothing ${i}\n`);
    const host = createWorkspace(hostDriver({ root }));
    const left: number[] = [];
    const matches = await host.grep('TODO', {
      onProgress: ({ phase, done, total }) => {
        if (phase === 'search' && total !== undefined && left.length === 0) left.push(total - done);
      },
    });
    expect(matches).toEqual([]);
    expect(left).toEqual([0]); // all five were searched while the walk ran
    await host.dispose();
  });
});

describe('the batches of the scan ahead', () => {
  it('start small and grow with the files sent, the files in flight staying a small share of them', () => {
    let previous = 0;
    for (let sent = 0; sent <= 200_000; sent += 97) {
      const files = aheadBatchFiles(sent);
      expect(files).toBeGreaterThanOrEqual(Math.max(previous, 256));
      expect(files).toBeLessThanOrEqual(1024);
      expect(files * IN_FLIGHT).toBeLessThanOrEqual(Math.max(256 * IN_FLIGHT, sent / 8));
      previous = files;
    }
    expect(aheadBatchFiles(0)).toBe(256);
    expect(aheadBatchFiles(100_000)).toBe(1024);
  });
});

describe('host grep reads files larger than a worker scratch buffer', () => {
  it('matches a text file of several megabytes, every line where it is', async () => {
    const root = tempDir();
    const lines = Array.from({ length: 120_000 }, (_, i) => (i % 40_000 === 39_999 ? `needle at ${i}` : `line ${i} of padding text`));
    fs.writeFileSync(join(root, 'big.txt'), `${lines.join('\n')}\n`);
    expect(fs.statSync(join(root, 'big.txt')).size).toBeGreaterThan(2 << 20);
    const host = createWorkspace(hostDriver({ root }));
    const found = await host.grep('needle', {});
    expect(found.map((match) => [match.lineNumber, match.lineContent])).toEqual([
      [40_000, 'needle at 39999'],
      [80_000, 'needle at 79999'],
      [120_000, 'needle at 119999'],
    ]);
    await host.dispose();
  });

  it('skips a large binary (a NUL, not UTF-8) whatever its tail holds, as it skips a small one', async () => {
    const root = tempDir();
    const head = Buffer.alloc(2 << 20, 0x41);
    head[10] = 0;
    head[20] = 0xff; // not UTF-8
    fs.writeFileSync(join(root, 'blob.bin'), Buffer.concat([head, Buffer.from('\nneedle in the tail\n')]));
    fs.writeFileSync(join(root, 'small.bin'), Buffer.from([0x00, 0xff, ...Buffer.from('\nneedle\n')]));
    fs.writeFileSync(join(root, 'text.txt'), `${'x'.repeat(2 << 20)}\nneedle in text\n`);
    const host = createWorkspace(hostDriver({ root }));
    expect((await host.grep('needle', {})).map((match) => match.path)).toEqual(['text.txt']);
    await host.dispose();
  });
});
