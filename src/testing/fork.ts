import { afterEach, describe, expect, it } from 'vitest';
import { forkWorkspace } from '../export/fork.js';
import { NotSupportedError } from '../workspace/errors.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

/**
 * `fork()`: an independent workspace with the same content and the history before the fork. A backend
 * without it must refuse with `NotSupportedError` (`ENOTSUP`) through `forkWorkspace`.
 */
export function forkSemantics(harness: ComplianceHarness): void {
  describe('fork', () => {
    const create = workspaces(harness);
    const forks: SnapshotableWorkspace[] = [];
    afterEach(async () => {
      for (const fork of forks.splice(0)) await fork.dispose();
    });
    const fork = async (workspace: SnapshotableWorkspace): Promise<SnapshotableWorkspace> => {
      const forked = await forkWorkspace(workspace);
      forks.push(forked);
      return forked;
    };
    /** Whether the backend forks (a probe fork, disposed after the test); one that cannot refuses with ENOTSUP. */
    const canFork = async (workspace: SnapshotableWorkspace): Promise<boolean> => {
      try {
        await fork(workspace);
        return true;
      } catch (error) {
        if (error instanceof NotSupportedError) return false;
        throw error;
      }
    };

    it('forks with the same content and the history before the fork, or refuses with ENOTSUP', async () => {
      const parent = await create();
      await parent.write('a.txt', 'one');
      await parent.mkdir('empty/inner');
      await parent.writeBytes(
        'bin/blob.bin',
        Uint8Array.from({ length: 300 }, (_, i) => (i * 7) % 256),
      );
      if (!(await canFork(parent))) {
        await expectError(forkWorkspace(parent), 'NotSupportedError', 'ENOTSUP');
        return;
      }
      const early = await parent.snapshot({ tag: 'early' });
      await parent.write('a.txt', 'two');
      const expected = await contentsOf(parent);
      const child = await fork(parent);
      expect(child.backend).toBe(parent.backend);
      expect(await contentsOf(child)).toEqual(expected);

      // Independent both ways.
      await child.write('a.txt', 'child');
      await child.delete('empty', { recursive: true });
      await parent.write('parent-only.txt', 'p');
      expect(await contentsOf(parent)).toEqual({ ...expected, 'parent-only.txt': 'p' });
      expect(await child.exists('parent-only.txt')).toBe(false);

      // The parent's snapshot from before the fork diffs and restores in the fork, and only there.
      expect(await child.diff(early)).toEqual([{ path: 'a.txt', status: 'modified' }]);
      await child.restore(early);
      expect((await child.read('a.txt')).content).toBe('one');
      expect((await child.stat('empty/inner')).isDirectory).toBe(true);
      expect((await parent.read('a.txt')).content).toBe('two');

      // Snapshots taken after the fork belong to the side that took them.
      const childOnly = await child.snapshot();
      const parentOnly = await parent.snapshot();
      await expectError(parent.restore(childOnly), 'SnapshotRestoreError', 'ESNAPSHOT');
      await expectError(child.restore(parentOnly), 'SnapshotRestoreError', 'ESNAPSHOT');
      await child.write('a.txt', 'later');
      await child.restore(childOnly);
      expect((await child.read('a.txt')).content).toBe('one');
    });

    it('keeps its history when the parent is disposed, and a fork of a fork reaches back to the first parent', async () => {
      const parent = await create();
      if (!(await canFork(parent))) return;
      await parent.write('a.txt', 'first');
      const first = await parent.snapshot();
      await parent.write('a.txt', 'second');
      const child = await fork(parent);
      await child.write('a.txt', 'third');
      const second = await child.snapshot();
      const grandchild = await fork(child);
      await parent.dispose();
      await child.dispose();
      await grandchild.restore(first);
      expect((await grandchild.read('a.txt')).content).toBe('first');
      await grandchild.restore(second);
      expect((await grandchild.read('a.txt')).content).toBe('third');
      expect(await grandchild.patch(first)).toContain('-first\n\\ No newline at end of file\n+third\n');
    });

    it('a fork of a read-only workspace is read-only', async () => {
      const parent = await create();
      await parent.write('a.txt', 'a');
      parent.seal();
      if (!(await canFork(parent))) return;
      const child = await fork(parent);
      expect(child.readOnly).toBe(true);
      await expectError(child.write('a.txt', 'b'), 'ReadOnlyError', 'EROFS');
      expect((await child.read('a.txt')).content).toBe('a');
    });
  });
}
