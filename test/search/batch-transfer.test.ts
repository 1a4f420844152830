import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { matchPool } from '../../src/workspace/search/match-pool.js';

/**
 * A grep batch's bytes go to the match worker in one buffer that moves there (transferred, not cloned):
 * the buffer the batch packed is the worker's afterwards, and the files' own bytes are never the ones moved.
 */
describe('grep batches move their bytes to the worker', () => {
  it('transfers the buffers a job hands over, and matches the files viewing them', async () => {
    const packed = new Uint8Array(new TextEncoder().encode('alpha TODO\nbeta\ngamma TODO\n'));
    const files = [packed.subarray(0, 16), packed.subarray(16)];
    const job = { pattern: 'TODO', flags: 'u', maxMatches: 10, needle: new TextEncoder().encode('TODO'), files };
    const result = await matchPool.matchLines(job, new AbortController().signal, [packed.buffer]);
    expect(packed.buffer.byteLength).toBe(0); // moved, not copied
    expect(result.matches.map((m) => [m.file, m.lineNumber, m.lineContent])).toEqual([
      [0, 1, 'alpha TODO'],
      [1, 1, 'gamma TODO'],
    ]);
  });

  it('leaves the workspace bytes intact after a grep over many batches', async () => {
    const workspace = createWorkspace(memoryDriver());
    const body = `${'x'.repeat(5000)}\nline with TODO\n`;
    for (let i = 0; i < 600; i += 1) await workspace.write(`dir${i % 7}/file${i}.txt`, body);
    const matches = await workspace.grep('TODO', { maxMatches: 10_000 });
    expect(matches).toHaveLength(600);
    expect(matches.every((m) => m.lineNumber === 2 && m.lineContent === 'line with TODO')).toBe(true);
    for (const i of [0, 299, 599])
      expect(new TextDecoder().decode((await workspace.readBytes(`dir${i % 7}/file${i}.txt`)).content)).toBe(body);
    await workspace.dispose();
  });
});
