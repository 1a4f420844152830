import { describe, expect, it } from 'vitest';
import { contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

/** `ifVersion` on write and writeBytes: a write over a version the caller did not expect changes nothing. */
export function compareAndSwap(harness: ComplianceHarness): void {
  describe('write with ifVersion', () => {
    const create = workspaces(harness);

    it('writes when the version matches, and conflicts without writing when it does not', async () => {
      const ws = await create();
      await ws.write('a.txt', 'one');
      const seen = (await ws.stat('a.txt')).version as number;
      expect(typeof seen).toBe('number');
      await ws.write('a.txt', 'two', { ifVersion: seen });
      const next = (await ws.stat('a.txt')).version as number;
      expect(next).not.toBe(seen);
      const before = await contentsOf(ws);
      const error = await expectError(ws.write('a.txt', 'three', { ifVersion: seen }), 'ConflictError', 'ECONFLICT');
      expect(error.message).toContain(`expected version ${seen}`);
      await expectError(ws.writeBytes('a.txt', new Uint8Array([1]), { ifVersion: seen, mode: 'append' }), 'ConflictError', 'ECONFLICT');
      expect(await contentsOf(ws)).toEqual(before);
      await ws.writeBytes('a.txt', new Uint8Array([0x34]), { ifVersion: next });
      expect((await ws.read('a.txt')).content).toBe('4');
    });

    it('conflicts for a missing file, creating nothing, and rejects a version that is not a whole number', async () => {
      const ws = await create();
      await expectError(ws.write('new/a.txt', 'x', { ifVersion: 1 }), 'ConflictError', 'ECONFLICT');
      expect(await ws.exists('new')).toBe(false);
      await ws.write('b.txt', 'x');
      await expectError(ws.write('b.txt', 'y', { ifVersion: -1 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.write('b.txt', 'y', { ifVersion: '1' as never }), 'InvalidArgumentError', 'EINVAL');
      expect((await ws.read('b.txt')).content).toBe('x');
    });

    it('lets exactly one of two concurrent writes with the same version through', async () => {
      const ws = await create();
      await ws.write('c.txt', 'base');
      const seen = (await ws.stat('c.txt')).version;
      const results = await Promise.allSettled(['left', 'right'].map((text) => ws.write('c.txt', text, { ifVersion: seen })));
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      const loser = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
      expect((loser.reason as { code: string }).code).toBe('ECONFLICT');
      expect(['left', 'right']).toContain((await ws.read('c.txt')).content);
    });
  });
}
