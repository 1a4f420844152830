import { describe, expect, it } from 'vitest';
import { expectError, workspaces, type ComplianceHarness } from './harness.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';

/** The version a file has now; every backend keeps one (a whole number). */
async function versionOf(ws: SnapshotableWorkspace, path: string): Promise<number> {
  const { version } = await ws.stat(path);
  expect(Number.isSafeInteger(version) && (version as number) >= 0, `version of ${path}: ${String(version)}`).toBe(true);
  return version as number;
}

/**
 * `stat().version`: the same while a file does not change, different after any change to it (a write of
 * the same bytes included, a rename or copy onto it, a restore), and never a number it had before for
 * other contents, so `ifVersion` cannot be fooled by a file that changed and changed back in version.
 */
export function fileVersions(harness: ComplianceHarness): void {
  describe('stat().version', () => {
    const create = workspaces(harness);

    it('stays the same while the file does not change, whatever else happens', async () => {
      const ws = await create();
      await ws.write('a.txt', 'one');
      const seen = await versionOf(ws, 'a.txt');
      await ws.read('a.txt');
      await ws.write('b.txt', 'other');
      await ws.write('d/c.txt', 'nested');
      await ws.rename('b.txt', 'd/b.txt');
      await ws.snapshot();
      expect(await versionOf(ws, 'a.txt')).toBe(seen);
      expect((await ws.stat('/')).version).toBeUndefined();
    });

    it('changes on every write, append and rewrite of the same bytes, and on delete and re-create', async () => {
      const ws = await create();
      const seen = new Set<number>();
      const step = async (action: () => Promise<unknown>): Promise<void> => {
        await action();
        const version = await versionOf(ws, 'a.txt');
        expect(seen.has(version), `version ${version} came back`).toBe(false);
        seen.add(version);
      };
      await step(() => ws.write('a.txt', 'one'));
      await step(() => ws.write('a.txt', 'two'));
      await step(() => ws.write('a.txt', 'two'));
      await step(() => ws.write('a.txt', '!', { mode: 'append' }));
      await step(() => ws.writeBytes('a.txt', new Uint8Array([0x74, 0x77, 0x6f, 0x21])));
      await step(() => ws.delete('a.txt').then(() => ws.write('a.txt', 'two!')));
      for (const text of ['aa', 'bb', 'aa', 'bb']) await step(() => ws.write('a.txt', text));
    });

    it('changes when a rename or copy lands on the file, and a stale ifVersion then conflicts', async () => {
      const ws = await create();
      await ws.write('a.txt', 'same');
      await ws.write('b.txt', 'same');
      const before = await versionOf(ws, 'b.txt');
      await ws.rename('a.txt', 'b.txt', { overwrite: true });
      const renamed = await versionOf(ws, 'b.txt');
      expect(renamed).not.toBe(before);
      await expectError(ws.write('b.txt', 'lost', { ifVersion: before }), 'ConflictError', 'ECONFLICT');
      await ws.write('c.txt', 'same');
      await ws.copy('c.txt', 'b.txt', { overwrite: true });
      expect(await versionOf(ws, 'b.txt')).not.toBe(renamed);
      await expectError(ws.write('b.txt', 'lost', { ifVersion: renamed }), 'ConflictError', 'ECONFLICT');
      expect((await ws.read('b.txt')).content).toBe('same');
      // A directory moved over the file's directory changes the file too.
      await ws.write('d/f.txt', 'same');
      await ws.write('e/f.txt', 'same');
      const nested = await versionOf(ws, 'e/f.txt');
      await ws.delete('e', { recursive: true });
      await ws.rename('d', 'e');
      expect(await versionOf(ws, 'e/f.txt')).not.toBe(nested);
    });

    it('changes on restore, and a restore never brings back a version with other contents', async () => {
      const ws = await create();
      await ws.write('a.txt', 'X1');
      const first = await ws.snapshot();
      const versionX = await versionOf(ws, 'a.txt');
      await ws.write('a.txt', 'Y2');
      const second = await ws.snapshot();
      const versionY = await versionOf(ws, 'a.txt');
      await ws.restore(first);
      const restored = await versionOf(ws, 'a.txt');
      expect(restored).not.toBe(versionY);
      // What a version names is contents: a version seen for X may come back with X, never with Z.
      await ws.write('a.txt', 'Z3');
      const versionZ = await versionOf(ws, 'a.txt');
      expect([versionX, versionY, restored]).not.toContain(versionZ);
      await ws.restore(second);
      expect(await versionOf(ws, 'a.txt')).not.toBe(versionZ);
      await expectError(ws.write('a.txt', 'lost', { ifVersion: versionZ }), 'ConflictError', 'ECONFLICT');
      expect((await ws.read('a.txt')).content).toBe('Y2');
      await ws.write('a.txt', 'W4', { ifVersion: await versionOf(ws, 'a.txt') });
      expect((await ws.read('a.txt')).content).toBe('W4');
    });

    it('is the target file’s version when read through a link', async () => {
      if (harness.fileKinds === false && harness.symlink === undefined) return; // backends without links have nothing to follow
      const ws = await create();
      await ws.write('real.txt', 'one');
      await (harness.symlink?.(ws, 'link.txt', 'real.txt') ?? ws.symlink('real.txt', 'link.txt'));
      expect(await versionOf(ws, 'link.txt')).toBe(await versionOf(ws, 'real.txt'));
      await ws.write('link.txt', 'two');
      expect(await versionOf(ws, 'link.txt')).toBe(await versionOf(ws, 'real.txt'));
    });
  });
}
