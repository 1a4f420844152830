import { describe, expect, it } from 'vitest';
import { WorkspaceSnapshotSchema } from '../snapshots/record.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { bytes, contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

async function seed(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('keep.txt', 'keep');
  await ws.write('edit.txt', 'before');
  await ws.write('gone.txt', 'will be deleted');
  await ws.write('dir/nested/deep.txt', 'deep');
  await ws.mkdir('empty/inner');
  await ws.writeBytes(
    'bin/blob.bin',
    Uint8Array.from({ length: 300 }, (_, i) => (i * 7) % 256),
  );
}

async function mess(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('edit.txt', 'after');
  await ws.delete('gone.txt');
  await ws.write('added.txt', 'new');
  await ws.write('new-dir/x.txt', 'x');
  await ws.delete('empty', { recursive: true });
  await ws.mkdir('another-empty');
  await ws.rename('dir', 'moved-dir');
  await ws.writeBytes('bin/blob.bin', new Uint8Array([1, 2, 3]), { mode: 'append' });
}

export function snapshotSemantics(harness: ComplianceHarness): void {
  describe('snapshots', () => {
    const create = workspaces(harness);

    it('returns a JSON-serialisable record that WorkspaceSnapshotSchema accepts', async () => {
      const ws = await create();
      const snapshot = await ws.snapshot({ tag: 'before-edit' });
      expect(WorkspaceSnapshotSchema.parse(JSON.parse(JSON.stringify(snapshot)))).toEqual(snapshot);
      expect(snapshot).toMatchObject({ backend: ws.backend, root: ws.root, tag: 'before-edit' });
      expect(new Date(snapshot.createdAt).toISOString()).toBe(snapshot.createdAt);
      const other = await ws.snapshot();
      expect(other.id).not.toBe(snapshot.id);
      expect(other.tag).toBeUndefined();
    });

    it('restores exactly: nothing added since survives, every file, byte and empty directory comes back', async () => {
      const ws = await create();
      await seed(ws);
      const expected = await contentsOf(ws);
      const snapshot = await ws.snapshot();
      await mess(ws);
      expect(await contentsOf(ws)).not.toEqual(expected);
      const result = await ws.restore(snapshot);
      expect(result.skipped).toEqual([]);
      expect(await contentsOf(ws)).toEqual(expected);
    });

    it('restores a record that went through JSON', async () => {
      const ws = await create();
      await seed(ws);
      const expected = await contentsOf(ws);
      const record = JSON.parse(JSON.stringify(await ws.snapshot()));
      await mess(ws);
      await ws.restore(record);
      expect(await contentsOf(ws)).toEqual(expected);
    });

    it('restores any snapshot of the history in any order', async () => {
      const ws = await create();
      await ws.write('v.txt', 'v1');
      const v1 = await ws.snapshot();
      const state1 = await contentsOf(ws);
      await ws.write('v.txt', 'v2');
      await ws.write('only-in-2.txt', '2');
      const v2 = await ws.snapshot();
      const state2 = await contentsOf(ws);
      await ws.restore(v1);
      expect(await contentsOf(ws)).toEqual(state1);
      await ws.write('v.txt', 'v3');
      await ws.mkdir('only-in-3');
      const v3 = await ws.snapshot();
      const state3 = await contentsOf(ws);
      await ws.restore(v2);
      expect(await contentsOf(ws)).toEqual(state2);
      await ws.restore(v3);
      expect(await contentsOf(ws)).toEqual(state3);
      await ws.restore(v1);
      await ws.restore(v1);
      expect(await contentsOf(ws)).toEqual(state1);
    });

    it('is never changed by a write after it', async () => {
      const ws = await create();
      await ws.write('a.txt', 'original');
      await ws.writeBytes('b.bin', bytes('bytes'));
      const snapshot = await ws.snapshot();
      await ws.write('a.txt', 'X', { mode: 'append' });
      await ws.write('a.txt', 'rewritten');
      await ws.writeBytes('b.bin', bytes('other'));
      await ws.delete('a.txt');
      await ws.restore(snapshot);
      expect(await contentsOf(ws)).toEqual({ 'a.txt': 'original', 'b.bin': 'bytes' });
    });

    it('restores an empty workspace', async () => {
      const ws = await create();
      const empty = await ws.snapshot();
      await seed(ws);
      await ws.restore(empty);
      expect(await ws.list('/')).toEqual([]);
    });

    it('refuses a snapshot from another workspace and changes nothing', async () => {
      const ws = await create();
      const other = await create();
      await other.write('theirs.txt', 'theirs');
      const foreign = await other.snapshot();
      await ws.write('mine.txt', 'mine');
      await expectError(ws.restore(foreign), 'SnapshotRestoreError', 'ESNAPSHOT');
      await expectError(ws.diff(foreign), 'SnapshotRestoreError', 'ESNAPSHOT');
      expect(await contentsOf(ws)).toEqual({ 'mine.txt': 'mine' });
    });

    it('refuses a tampered, unknown or malformed record and changes nothing', async () => {
      const ws = await create();
      await ws.write('mine.txt', 'mine');
      const real = await ws.snapshot();
      await ws.write('after.txt', 'after');
      const forged = [
        { ...real, ref: `${real.ref}0` },
        { ...real, ref: 'refs/heads/main' },
        { ...real, ref: '0000000000000000000000000000000000000000' },
        { ...real, backend: real.backend === 'memory' ? 'host' : 'memory' },
        { ...real, createdAt: 'yesterday' },
        { id: real.id },
        null,
      ];
      for (const record of forged) await expectError(ws.restore(record as never), 'SnapshotRestoreError', 'ESNAPSHOT');
      expect(await contentsOf(ws)).toEqual({ 'after.txt': 'after', 'mine.txt': 'mine' });
    });

    it('diffs files between two snapshots and against the live state, sorted, directories left out', async () => {
      const ws = await create();
      await seed(ws);
      const before = await ws.snapshot();
      await mess(ws);
      const expected = [
        { path: 'added.txt', status: 'added' },
        { path: 'bin/blob.bin', status: 'modified' },
        { path: 'dir/nested/deep.txt', status: 'deleted' },
        { path: 'edit.txt', status: 'modified' },
        { path: 'gone.txt', status: 'deleted' },
        { path: 'moved-dir/nested/deep.txt', status: 'added' },
        { path: 'new-dir/x.txt', status: 'added' },
      ];
      expect(await ws.diff(before)).toEqual(expected);
      const after = await ws.snapshot();
      expect(await ws.diff(before, after)).toEqual(expected);
      expect(await ws.diff(after, before)).toEqual(
        expected.map((e) => ({ path: e.path, status: e.status === 'added' ? 'deleted' : e.status === 'deleted' ? 'added' : 'modified' })),
      );
      expect(await ws.diff(after)).toEqual([]);
    });

    it('does not report a file rewritten with the same bytes, or a file replaced by a directory as a directory', async () => {
      const ws = await create();
      await ws.write('same.txt', 'same');
      await ws.write('swap', 'file');
      const before = await ws.snapshot();
      await ws.write('same.txt', 'same');
      await ws.delete('swap');
      await ws.write('swap/inner.txt', 'now a dir');
      expect(await ws.diff(before)).toEqual([
        { path: 'swap', status: 'deleted' },
        { path: 'swap/inner.txt', status: 'added' },
      ]);
    });
  });
}
