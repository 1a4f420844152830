import { describe, expect, it } from 'vitest';
import { composeDriver } from '../../src/compose/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { contentsOf } from '../../src/testing/harness.js';
import { BACKENDS, disposing } from '../support/backends.js';

describe('restore receipts: git tree ids', () => {
  for (const entry of BACKENDS.filter((backend) => backend.name === 'memory' || backend.name === 'host')) {
    it(`a receipt's treeHash is what git write-tree prints for the same files (${entry.name})`, async () => {
      const { create } = disposing(entry);
      const workspace = await create();
      await workspace.write('a.txt', 'hello\n');
      await workspace.write('d/b.txt', 'x');
      const snapshot = await workspace.snapshot();
      await workspace.write('a.txt', 'changed');
      const { receipt } = await workspace.restore(snapshot);
      // `printf 'hello\n' > a.txt; mkdir d; printf x > d/b.txt; git add .; git write-tree`
      expect(receipt).toEqual({
        treeHash: '6cea91b04bb0ee583812deb647f220c6dde4ff82',
        snapshotTreeHash: '6cea91b04bb0ee583812deb647f220c6dde4ff82',
        matches: true,
      });
    });
  }
});

describe('restore dry run on a composition', () => {
  it("lists a read-only mount's differences as blocked, and the real restore leaves them (its receipt says so)", async () => {
    const shared = createWorkspace(memoryDriver());
    await shared.write('ref.txt', 'v1');
    const composed = createWorkspace(
      composeDriver({
        mounts: [
          { path: '/work', workspace: createWorkspace(memoryDriver()), access: 'read-write' },
          { path: '/ref', workspace: shared, access: 'read-only' },
        ],
      }),
    );
    try {
      await composed.write('work/a.txt', 'one');
      const snapshot = await composed.snapshot();
      await composed.write('work/a.txt', 'two');
      // Changed beside the composition: a restore of the composition never writes a read-only mount.
      await shared.write('ref.txt', 'v2');
      const live = await contentsOf(composed);
      const dry = await composed.restore(snapshot, { dryRun: true });
      expect(dry.preview).toEqual({
        created: [],
        modified: ['work/a.txt'],
        deleted: [],
        blocked: [{ path: 'ref/ref.txt', reason: 'in the read-only mount ref, which restores do not write' }],
      });
      expect(await contentsOf(composed)).toEqual(live);
      const real = await composed.restore(snapshot);
      expect((await composed.read('work/a.txt')).content).toBe('one');
      expect((await composed.read('ref/ref.txt')).content).toBe('v2');
      expect(real.receipt?.matches).toBe(false);
    } finally {
      await composed.dispose();
      await shared.dispose();
    }
  });
});
