import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

async function seed(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('keep.txt', 'keep');
  await ws.write('edit.txt', 'before');
  await ws.write('gone.txt', 'gone');
  await ws.write('old/deep.txt', 'deep');
  await ws.mkdir('empty');
}

async function change(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('edit.txt', 'after');
  await ws.delete('gone.txt');
  await ws.write('added.txt', 'new');
  await ws.write('new-dir/x.txt', 'x');
  await ws.delete('old', { recursive: true });
  await ws.delete('empty');
  // Rewritten with the same bytes: no change to restore.
  await ws.write('keep.txt', 'keep');
}

/**
 * `restore(snapshot, { dryRun: true })` lists what a restore would create, modify, delete and leave alone,
 * and changes nothing; every real restore returns a receipt (the tree it left, hashed, against the snapshot's).
 */
export function restorePreview(harness: ComplianceHarness): void {
  describe('restore dry run and receipts', () => {
    const create = workspaces(harness);

    it('a dry run lists what would be created, modified and deleted (files and directories), changing nothing', async () => {
      const ws = await create();
      await seed(ws);
      const snapshot = await ws.snapshot();
      await change(ws);
      const live = await contentsOf(ws);
      const result = await ws.restore(snapshot, { dryRun: true });
      expect(result.preview).toEqual({
        // What the snapshot holds and the live state lacks.
        created: ['empty', 'gone.txt', 'old', 'old/deep.txt'],
        modified: ['edit.txt'],
        deleted: ['added.txt', 'new-dir', 'new-dir/x.txt'],
        blocked: [],
      });
      expect(result.receipt).toBeUndefined();
      expect(JSON.parse(JSON.stringify(result))).toEqual(result);
      expect(await contentsOf(ws)).toEqual(live);
      // The real restore then does exactly that.
      await ws.restore(snapshot);
      expect((await ws.restore(snapshot, { dryRun: true })).preview).toEqual({ created: [], modified: [], deleted: [], blocked: [] });
    });

    it('a dry run on a read-only workspace lists every change as blocked', async () => {
      const writable = await create();
      await seed(writable);
      const snapshot = await writable.snapshot();
      await change(writable);
      writable.seal();
      const { preview } = await writable.restore(snapshot, { dryRun: true });
      expect(preview?.created).toEqual([]);
      expect(preview?.blocked.map((entry) => entry.path)).toContain('edit.txt');
      expect(preview?.blocked.every((entry) => /read-only/.test(entry.reason))).toBe(true);
      await expectError(writable.restore(snapshot), 'ReadOnlyError', 'EROFS');
    });

    it('refuses a dryRun that is not a boolean, changing nothing', async () => {
      const ws = await create();
      await seed(ws);
      const snapshot = await ws.snapshot();
      await change(ws);
      const live = await contentsOf(ws);
      await expectError(ws.restore(snapshot, { dryRun: 'yes' as unknown as boolean }), 'InvalidArgumentError', 'EINVAL');
      expect(await contentsOf(ws)).toEqual(live);
    });

    it('a real restore returns a receipt: the tree it left, hashed, matching the snapshot', async () => {
      const ws = await create();
      await seed(ws);
      const snapshot = await ws.snapshot();
      await change(ws);
      const { receipt } = await ws.restore(snapshot);
      expect(receipt).toEqual({ treeHash: expect.stringMatching(/^[0-9a-f]{40}$/), snapshotTreeHash: receipt?.treeHash, matches: true });
      // Another state hashes differently; the same state again the same.
      await ws.write('edit.txt', 'third');
      const other = await ws.snapshot();
      expect((await ws.restore(other)).receipt?.treeHash).not.toBe(receipt?.treeHash);
      expect((await ws.restore(snapshot)).receipt?.treeHash).toBe(receipt?.treeHash);
    });
  });
}
