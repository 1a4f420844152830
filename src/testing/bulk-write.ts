import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace, WriteFilesEntry } from '../workspace/types.js';
import { contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const file = (path: string, text: string): WriteFilesEntry => ({ kind: 'file', path, content: bytes(text) });

function bulk(ws: SnapshotableWorkspace): NonNullable<SnapshotableWorkspace['writeFiles']> {
  return (entries) => (ws.writeFiles as NonNullable<SnapshotableWorkspace['writeFiles']>).call(ws, entries);
}

/** `writeFiles` is optional in the protocol (every workspace built by `createWorkspace` has it): checked when present. */
export function bulkWrites(harness: ComplianceHarness): void {
  describe('writeFiles (bulk write)', () => {
    const create = workspaces(harness);
    const workspace = async (createOptions?: Parameters<typeof create>[0]): Promise<SnapshotableWorkspace | undefined> => {
      const ws = await create(createOptions);
      return ws.writeFiles === undefined ? undefined : ws;
    };

    it('writes files (parents made, existing files replaced) and directories, and reports what it wrote', async () => {
      const ws = await workspace();
      if (ws === undefined) return;
      await ws.write('old.txt', 'before');
      await ws.mkdir('kept');
      await ws.write('kept/inside.txt', 'stays');
      const result = await bulk(ws)([
        { kind: 'directory', path: 'empty/dir' },
        { kind: 'directory', path: 'kept' },
        file('/a/b/c.txt', 'abc'),
        file('old.txt', 'after'),
        file('top.bin', ''),
      ]);
      expect(result).toEqual({ files: 3, bytes: 8, skipped: [] });
      expect(await contentsOf(ws)).toEqual({
        'a/': '',
        'a/b/': '',
        'a/b/c.txt': 'abc',
        'empty/': '',
        'empty/dir/': '',
        'kept/': '',
        'kept/inside.txt': 'stays',
        'old.txt': 'after',
        'top.bin': '',
      });
    });

    it('checks every path before writing anything', async () => {
      const ws = await workspace({ limits: { maxWriteBytes: 4 } });
      if (ws === undefined) return;
      await expectError(bulk(ws)([file('a.txt', 'a'), file('../escape.txt', 'x')]), 'PathEscapeError', 'EACCES');
      await expectError(bulk(ws)([file('a.txt', 'a'), file('bad\nname', 'x')]), 'InvalidPathError', 'EINVAL');
      await expectError(bulk(ws)([file('a.txt', 'a'), file('big.txt', 'too big')]), 'LimitExceededError', 'EFBIG');
      await expectError(bulk(ws)([file('a.txt', 'a'), file('/', 'x')]), 'IsADirectoryError', 'EISDIR');
      await expectError(bulk(ws)([file('a.txt', 'a'), { kind: 'link', path: 'x' } as never]), 'InvalidArgumentError', 'EINVAL');
      expect(await contentsOf(ws)).toEqual({});
    });

    it('stops at a clash with the real error code, keeping what it wrote before', async () => {
      const ws = await workspace();
      if (ws === undefined) return;
      await ws.mkdir('dir');
      await ws.write('plain.txt', 'p');
      await expectError(bulk(ws)([file('first.txt', '1'), file('dir', 'x'), file('never.txt', 'n')]), 'IsADirectoryError', 'EISDIR');
      await expectError(bulk(ws)([file('plain.txt/below.txt', 'x')]), 'NotADirectoryError', 'ENOTDIR');
      expect(await contentsOf(ws)).toEqual({ 'dir/': '', 'first.txt': '1', 'plain.txt': 'p' });
    });

    it('is refused on a read-only workspace, and what it writes is in snapshots and diffs', async () => {
      const ws = await workspace();
      if (ws === undefined) return;
      const before = await ws.snapshot();
      await bulk(ws)([file('src/a.ts', 'a'), file('b.ts', 'b')]);
      expect((await ws.diff(before)).map((entry) => `${entry.status} ${entry.path}`)).toEqual(['added b.ts', 'added src/a.ts']);
      await ws.restore(before);
      expect(await contentsOf(ws)).toEqual({});
      const sealed = await workspace({ readOnly: true });
      if (sealed === undefined) return;
      await expectError(bulk(sealed)([file('a.txt', 'a')]), 'ReadOnlyError', 'EROFS');
    });
  });
}
