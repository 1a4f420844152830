import { chmodSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { mergeInto, mergeTrees, type MergeChange } from '../../src/history/merge.js';
import { contentsOf } from '../../src/testing/harness.js';
import { createWorkspace, type ManagedWorkspace } from '../../src/workspace/create-workspace.js';
import type { SnapshotEntry, SnapshotTree } from '../../src/workspace/types.js';

const opened: ManagedWorkspace[] = [];
afterEach(async () => {
  for (const workspace of opened.splice(0).reverse()) await workspace.dispose();
});

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/** A base workspace holding `files`, and two forks of it (ours, theirs) to edit. */
async function forked(
  files: Record<string, string>,
  driver: () => Parameters<typeof createWorkspace>[0] = memoryDriver,
  prepare: (base: ManagedWorkspace) => void = () => undefined,
) {
  const base = createWorkspace(driver());
  opened.push(base);
  for (const [path, content] of Object.entries(files)) await base.write(path, content);
  prepare(base);
  const snapshot = await base.snapshot();
  const [ours, theirs] = [await base.fork(), await base.fork()];
  opened.push(ours, theirs);
  return {
    base,
    ours,
    theirs,
    snapshot,
    /** Merges theirs into ours through the protocol. */
    apply: async () => mergeInto(ours, await theirs.snapshotTree(), await base.snapshotTree(snapshot)),
    merge: async () => mergeTrees(await base.snapshotTree(snapshot), await ours.snapshotTree(), await theirs.snapshotTree()),
  };
}

/** Changes with their bytes shown as text. */
const shown = (changes: MergeChange[]) =>
  changes.map((change) => (change.kind === 'write' ? { ...change, content: text(change.content) } : change));

describe('mergeTrees', () => {
  it('merges edits to different lines of a file and to different files cleanly', async () => {
    const { ours, theirs, merge } = await forked({ 'a.txt': 'one\ntwo\nthree\nfour\n', 'b.txt': 'b\n', 'gone.txt': 'x\n' });
    await ours.write('a.txt', 'ONE\ntwo\nthree\nfour\n');
    await ours.write('ours-only.txt', 'mine\n');
    await theirs.write('a.txt', 'one\ntwo\nthree\nFOUR\n');
    await theirs.write('b.txt', 'B\n');
    await theirs.write('new/deep.txt', 'new\n');
    await theirs.delete('gone.txt');
    const merge_ = await merge();
    expect(merge_.conflicts).toEqual([]);
    expect(shown(merge_.changes)).toEqual([
      { path: 'a.txt', kind: 'write', content: 'ONE\ntwo\nthree\nFOUR\n', executable: false },
      { path: 'b.txt', kind: 'write', content: 'B\n', executable: false },
      { path: 'gone.txt', kind: 'delete' },
      { path: 'new', kind: 'mkdir' },
      { path: 'new/deep.txt', kind: 'write', content: 'new\n', executable: false },
    ]);
  });

  it('returns overlapping edits as a content conflict with its regions and each side', async () => {
    const { ours, theirs, merge } = await forked({ 'a.txt': 'one\ntwo\nthree\n' });
    await ours.write('a.txt', 'one\nours\nthree\n');
    await theirs.write('a.txt', 'one\ntheirs\nthree\n');
    const { changes, conflicts, markers } = await merge();
    expect(changes).toEqual([]);
    expect(conflicts).toEqual([
      {
        path: 'a.txt',
        kind: 'content',
        base: { kind: 'file', executable: false, sizeBytes: 14 },
        ours: { kind: 'file', executable: false, sizeBytes: 15 },
        theirs: { kind: 'file', executable: false, sizeBytes: 17 },
        regions: [{ base: 'two\n', ours: 'ours\n', theirs: 'theirs\n', startLine: 2 }],
      },
    ]);
    expect(shown(markers)).toEqual([
      {
        path: 'a.txt',
        kind: 'write',
        executable: false,
        content: 'one\n<<<<<<< ours\nours\n||||||| base\ntwo\n=======\ntheirs\n>>>>>>> theirs\nthree\n',
      },
    ]);
  });

  it('reports a delete on one side and a change on the other, either way round', async () => {
    const { ours, theirs, merge } = await forked({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await ours.delete('a.txt');
    await theirs.write('a.txt', 'changed\n');
    await ours.write('b.txt', 'changed\n');
    await theirs.delete('b.txt');
    const { conflicts, markers } = await merge();
    expect(conflicts.map(({ path, kind, ours: o, theirs: t }) => ({ path, kind, ours: o?.kind, theirs: t?.kind }))).toEqual([
      { path: 'a.txt', kind: 'delete-modify', ours: undefined, theirs: 'file' },
      { path: 'b.txt', kind: 'delete-modify', ours: 'file', theirs: undefined },
    ]);
    // With markers, the modified file stays (as git leaves it): theirs' a.txt comes back; ours' b.txt stays.
    expect(shown(markers)).toEqual([{ path: 'a.txt', kind: 'write', content: 'changed\n', executable: false }]);
  });

  it('takes identical additions and deletions on both sides as clean; different additions are add/add', async () => {
    const { ours, theirs, merge } = await forked({ 'gone.txt': 'x\n' });
    for (const side of [ours, theirs]) {
      await side.write('same.txt', 'same\n');
      await side.delete('gone.txt');
    }
    await ours.write('both.txt', 'ours\n');
    await theirs.write('both.txt', 'theirs\n');
    const { changes, conflicts } = await merge();
    expect(changes).toEqual([]);
    expect(conflicts).toMatchObject([{ path: 'both.txt', kind: 'add-add', regions: [{ base: '', ours: 'ours\n', theirs: 'theirs\n' }] }]);
  });

  it('conflicts on a directory on one side where the other has a file', async () => {
    const { ours, theirs, merge } = await forked({ 'keep.txt': 'k\n', 'dir/a.txt': 'a\n' });
    await ours.write('x/inside.txt', 'ours made x a directory\n');
    await theirs.write('x', 'theirs made x a file\n');
    // Theirs replaced a directory with a file while ours changed a file in it.
    await ours.write('dir/a.txt', 'ours changed\n');
    await theirs.delete('dir', { recursive: true });
    await theirs.write('dir', 'now a file\n');
    const { changes, conflicts } = await merge();
    expect(conflicts.map(({ path, kind, ours: o, theirs: t }) => ({ path, kind, ours: o?.kind, theirs: t?.kind }))).toEqual([
      { path: 'dir', kind: 'type', ours: 'directory', theirs: 'file' },
      { path: 'x', kind: 'type', ours: 'directory', theirs: 'file' },
    ]);
    expect(changes).toEqual([]);
  });

  it('replaces a directory by a file, and a file by a directory, when only one side changed them', async () => {
    const { ours, theirs, merge, apply } = await forked({ 'dir/a.txt': 'a\n', 'dir/b/c.txt': 'c\n', 'file.txt': 'f\n' });
    await theirs.delete('dir', { recursive: true });
    await theirs.write('dir', 'a file now\n');
    await theirs.delete('file.txt');
    await theirs.write('file.txt/inside.txt', 'a directory now\n');
    await ours.write('other.txt', 'unrelated\n');
    expect((await merge()).conflicts).toEqual([]);
    expect(await apply()).toEqual({
      applied: true,
      merged: ['dir', 'dir/a.txt', 'dir/b', 'dir/b/c.txt', 'file.txt', 'file.txt/inside.txt'],
      conflicts: [],
    });
    expect(await contentsOf(ours)).toEqual({
      dir: 'a file now\n',
      'file.txt/': '',
      'file.txt/inside.txt': 'a directory now\n',
      'other.txt': 'unrelated\n',
    });
  });

  it('keeps a file ours added in a directory theirs deleted (the directory stays for it)', async () => {
    const { ours, theirs, apply } = await forked({ 'dir/a.txt': 'a\n', 'dir/b.txt': 'b\n', 'top.txt': 't\n' });
    await theirs.delete('dir', { recursive: true });
    await ours.write('dir/new.txt', 'ours\n');
    expect(await apply()).toEqual({ applied: true, merged: ['dir/a.txt', 'dir/b.txt'], conflicts: [] });
    expect(await contentsOf(ours)).toEqual({ 'dir/': '', 'dir/new.txt': 'ours\n', 'top.txt': 't\n' });
  });

  it('reads only what changed: a 5,000-file tree with three changes a side', async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < 5000; index += 1) files[`d${index % 50}/f${index}.txt`] = `file ${index}\n`;
    const { base, ours, theirs, snapshot } = await forked(files);
    await ours.write('d1/f1.txt', 'ours\n');
    await ours.write('d2/f2.txt', 'ours\n');
    await ours.write('d3/new.txt', 'ours\n');
    await theirs.write('d1/f1.txt', 'file 1\ntheirs\n');
    await theirs.write('d4/f4.txt', 'theirs\n');
    await theirs.delete('d5/f5.txt');
    const reads = { bytes: 0, walks: 0, lookups: 0 };
    const counted = (tree: SnapshotTree): SnapshotTree => {
      const entryWithCount = (entry: SnapshotEntry | undefined): SnapshotEntry | undefined => {
        if (entry === undefined || entry.kind === 'directory') return entry;
        const read = entry.bytes;
        return {
          ...entry,
          bytes: () => {
            reads.bytes += 1;
            return read();
          },
        };
      };
      // A wrapper as a caller may make: everything it does not count reaches the tree as it is.
      return new Proxy(tree, {
        get(target, property, receiver) {
          if (property === 'entries')
            return () => {
              reads.walks += 1;
              return target.entries();
            };
          if (property === 'entry')
            return async (path: string) => {
              reads.lookups += 1;
              return entryWithCount(await target.entry(path));
            };
          return Reflect.get(target, property, receiver) as unknown;
        },
      });
    };
    const merge = await mergeTrees(
      counted(await base.snapshotTree(snapshot)),
      counted(await ours.snapshotTree()),
      counted(await theirs.snapshotTree()),
    );
    expect(merge.conflicts).toMatchObject([{ path: 'd1/f1.txt', kind: 'content' }]);
    expect(merge.changes.map((change) => change.path)).toEqual(['d4/f4.txt', 'd5/f5.txt']);
    expect(reads.walks).toBe(0);
    // Five changed paths, three entries each; bytes for the sides that changed (and their base).
    expect(reads.lookups).toBe(15);
    expect(reads.bytes).toBeLessThanOrEqual(12);
  });
});

describe('mergeTrees on host workspaces (executable bits, links, two stores)', () => {
  const host = () => hostDriver();

  it('takes the side that changed a mode, and merges content and mode each on its own', async () => {
    const { ours, theirs, merge, apply } = await forked({ 'run.sh': 'echo one\necho two\necho three\n', 'tool.sh': 'echo\n' }, host);
    chmodSync(join(theirs.root, 'run.sh'), 0o755);
    await ours.write('run.sh', 'echo ONE\necho two\necho three\n');
    chmodSync(join(ours.root, 'tool.sh'), 0o755);
    await theirs.write('tool.sh', 'echo theirs\n');
    const { changes, conflicts } = await merge();
    expect(conflicts).toEqual([]);
    expect(shown(changes)).toEqual([
      { path: 'run.sh', kind: 'write', content: 'echo ONE\necho two\necho three\n', executable: true, modeChanged: true },
      { path: 'tool.sh', kind: 'write', content: 'echo theirs\n', executable: true },
    ]);
    await apply();
    expect(await contentsOf(ours)).toEqual({ 'run.sh': 'echo ONE\necho two\necho three\n', 'tool.sh': 'echo theirs\n' });
    for (const name of ['run.sh', 'tool.sh']) expect(statSync(join(ours.root, name)).mode & 0o111, name).toBe(0o111);
  });

  it('conflicts on a mode when both added the same file, one executable', async () => {
    const { ours, theirs, merge } = await forked({}, host);
    await ours.writeFiles!([{ kind: 'file', path: 'x.sh', content: new TextEncoder().encode('x\n'), executable: true }]);
    await theirs.write('x.sh', 'x\n');
    expect((await merge()).conflicts).toEqual([
      {
        path: 'x.sh',
        kind: 'mode',
        ours: { kind: 'file', executable: true, sizeBytes: 2 },
        theirs: { kind: 'file', executable: false, sizeBytes: 2 },
      },
    ]);
  });

  it('merges link targets as values: one side changed takes it, both changed differently conflicts', async () => {
    const links = (base: ManagedWorkspace) => {
      symlinkSync('a.txt', join(base.root, 'link'));
      symlinkSync('a.txt', join(base.root, 'other'));
    };
    const { ours, theirs, merge: mergeNow } = await forked({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, host, links);
    const relink = (side: ManagedWorkspace, name: string, target: string) => {
      unlinkSync(join(side.root, name));
      symlinkSync(target, join(side.root, name));
    };
    relink(ours, 'link', 'b.txt');
    relink(theirs, 'link', 'missing.txt');
    relink(theirs, 'other', 'b.txt');
    const merge = await mergeNow();
    expect(merge.conflicts).toEqual([
      {
        path: 'link',
        kind: 'content',
        base: { kind: 'symlink', target: 'a.txt' },
        ours: { kind: 'symlink', target: 'b.txt' },
        theirs: { kind: 'symlink', target: 'missing.txt' },
      },
    ]);
    expect(merge.changes).toEqual([
      { path: 'other', kind: 'delete' },
      { path: 'other', kind: 'symlink', target: 'b.txt' },
    ]);
  });

  it('compares two host stores by object id: a fork and its parent read only what changed', async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < 300; index += 1) files[`d${index % 10}/f${index}.txt`] = `file ${index}\n`;
    const { base, ours, theirs, snapshot } = await forked(files, host);
    await ours.write('d1/f1.txt', 'ours\n');
    await theirs.write('d2/f2.txt', 'theirs\n');
    let walks = 0;
    const counted = (tree: SnapshotTree): SnapshotTree =>
      new Proxy(tree, {
        get: (target, property, receiver) =>
          property === 'entries'
            ? () => {
                walks += 1;
                return target.entries();
              }
            : (Reflect.get(target, property, receiver) as unknown),
      });
    const merge = await mergeTrees(
      counted(await base.snapshotTree(snapshot)),
      counted(await ours.snapshotTree()),
      counted(await theirs.snapshotTree()),
    );
    expect(merge).toMatchObject({ conflicts: [], changes: [{ path: 'd2/f2.txt', kind: 'write' }] });
    expect(walks).toBe(0);
  });
});
