import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exportTo } from '../../src/export/export.js';
import { ExportConflictError } from '../../src/export/export-plan.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { SESSION_BACKENDS } from '../support/backends.js';
import { op, protocolFiles, run } from './edits.js';
import { tempDirs } from '../../src/testing/harness.js';
import { filesOf } from '../support/host-files.js';
import { materialize } from './support.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';

const EXPORT_BACKENDS = SESSION_BACKENDS.map((entry) => ({ ...entry, host: entry.name === 'host', create: () => entry.open() }));

describe.each(EXPORT_BACKENDS)('exportTo on $name', (backend) => {
  const tempDir = tempDirs();
  const open = async (files: Record<string, string>): Promise<SnapshotableWorkspace> => {
    const workspace = backend.create();
    for (const [path, text] of Object.entries(files)) await workspace.write(path, text);
    return workspace;
  };

  it('makes a destination holding the `from` state hold exactly the live state (random edits)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op(true), { maxLength: 12 }),
        fc.array(op(true), { minLength: 1, maxLength: 12 }),
        async (before, after) => {
          const workspace = backend.create();
          try {
            await run(workspace, before);
            const from = await workspace.snapshot();
            const dest = tempDir();
            await materialize(await workspace.snapshotTree(from), dest);
            const fromFiles = filesOf(dest);
            await run(workspace, after);
            const dry = await exportTo(workspace, dest, { allowedHostRoots: [dest], from, dryRun: true });
            const result = await exportTo(workspace, dest, { allowedHostRoots: [dest], from });
            expect({ ...result, dryRun: true }).toEqual(dry);
            expect(result.conflicts).toEqual([]);
            // Exactly the live state, but for links leading out of the destination: left as they were, and reported.
            const expected = backend.host ? filesOf(workspace.root) : await protocolFiles(workspace);
            for (const { path, reason } of result.skipped ?? []) {
              expect(reason).toContain('leads out of the destination');
              expect(expected[path]).toMatch(/^link (\.\.\/|\/)/);
              if (fromFiles[path] === undefined) delete expected[path];
              else expected[path] = fromFiles[path];
            }
            expect(filesOf(dest)).toEqual(expected);
          } finally {
            await workspace.dispose();
          }
        },
      ),
      { numRuns: 30 },
    );
  }, 120_000);

  it('sets executable bits and creates links inside the destination; one leading out is refused and reported', async () => {
    const workspace = await open({ 'bin/tool': 'tool', 'a.txt': 'a' });
    await workspace.setExecutable('bin/tool', true);
    await workspace.symlink('bin/tool', 'tool');
    await workspace.symlink('nowhere', 'dangling');
    await workspace.symlink('../../../etc', 'bin/etc');
    const dest = tempDir();
    const result = await exportTo(workspace, dest, { allowedHostRoots: [dest] });
    expect(result).toEqual({
      written: ['a.txt', 'bin/tool', 'dangling', 'tool'],
      deleted: [],
      conflicts: [],
      skipped: [{ path: 'bin/etc', reason: 'a symlink to "../../../etc" leads out of the destination: an export never creates one' }],
      dryRun: false,
    });
    expect(filesOf(dest)).toEqual({
      'a.txt': 'file 100644 a',
      'bin/tool': 'file 100755 tool',
      dangling: 'link nowhere',
      tool: 'link bin/tool',
    });
    await workspace.dispose();
  });

  it('refuses a link whose .. follow a name: through a link to "." it would climb out of the destination', async () => {
    const workspace = await open({ 'real/x.txt': 'x' });
    await workspace.symlink('.', 'here');
    const climb = `${'here/'.repeat(12)}${'../'.repeat(12)}etc/passwd`;
    await workspace.symlink(climb, 'passwd');
    await workspace.symlink('real/../real/x.txt', 'via-real');
    await workspace.symlink('../real/x.txt', 'sub/up');
    const dest = tempDir();
    const result = await exportTo(workspace, dest, { allowedHostRoots: [dest] });
    const why = 'climbs (..) after a name, which may be a link leading out: an export never creates one';
    expect(result.skipped).toEqual([
      { path: 'passwd', reason: `a symlink to ${JSON.stringify(climb)} ${why}` },
      { path: 'via-real', reason: `a symlink to "real/../real/x.txt" ${why}` },
    ]);
    expect(filesOf(dest)).toEqual({ here: 'link .', 'real/x.txt': 'file 100644 x', 'sub/up': 'link ../real/x.txt' });
    await workspace.dispose();
  });

  it('exports the whole tree into a new directory, empty directories included', async () => {
    const workspace = await open({ 'a.txt': 'A', 'src/b c/é.ts': 'x\n' });
    await workspace.mkdir('empty/inner');
    const allowed = tempDir();
    // A dry run reports the same and creates nothing, not even the destination.
    const dry = await exportTo(workspace, join(allowed, 'out', 'here'), { allowedHostRoots: [allowed], dryRun: true });
    expect(dry).toEqual({ written: ['a.txt', 'src/b c/é.ts'], deleted: [], conflicts: [], dryRun: true });
    expect(readdirSync(allowed)).toEqual([]);
    const result = await exportTo(workspace, join(allowed, 'out', 'here'), { allowedHostRoots: [allowed] });
    expect(result).toEqual({ written: ['a.txt', 'src/b c/é.ts'], deleted: [], conflicts: [], dryRun: false });
    const out = join(allowed, 'out', 'here');
    expect(filesOf(out)).toEqual({ 'a.txt': 'file 100644 A', 'src/b c/é.ts': 'file 100644 x\n' });
    expect(readdirSync(join(out, 'empty'))).toEqual(['inner']);
    await workspace.dispose();
  });

  it('writes the changes since `from` onto a destination holding the `from` state', async () => {
    const workspace = await open({ 'keep.txt': 'k', 'edit.txt': 'old', 'gone/deep.txt': 'bye', 'file-then-dir': 'f' });
    const from = await workspace.snapshot();
    const dest = tempDir();
    await materialize(await workspace.snapshotTree(from), dest);
    writeFileSync(join(dest, 'host-only.txt'), 'mine');
    await workspace.write('edit.txt', 'new');
    await workspace.delete('gone', { recursive: true });
    await workspace.delete('file-then-dir');
    await workspace.write('file-then-dir/inside.txt', 'i');
    await workspace.write('added.bin', '\u0000\u0001');
    const result = await exportTo(workspace, dest, { allowedHostRoots: [dest], from });
    expect(result).toEqual({
      written: ['added.bin', 'edit.txt', 'file-then-dir/inside.txt'],
      deleted: ['file-then-dir', 'gone/deep.txt'],
      conflicts: [],
      dryRun: false,
    });
    expect(filesOf(dest)).toEqual({
      'added.bin': 'file 100644 \u0000\u0001',
      'edit.txt': 'file 100644 new',
      'file-then-dir/inside.txt': 'file 100644 i',
      'host-only.txt': 'file 100644 mine',
      'keep.txt': 'file 100644 k',
    });
    expect(existsSync(join(dest, 'gone'))).toBe(false);
    // Nothing left to do: a second export writes nothing and finds no conflict.
    expect(await exportTo(workspace, dest, { allowedHostRoots: [dest], from })).toEqual({
      written: [],
      deleted: [],
      conflicts: [],
      dryRun: false,
    });
    await workspace.dispose();
  });

  it('never silently overwrites a destination changed since `from`: fail, skip, overwrite, dry run', async () => {
    const workspace = await open({ 'a.txt': 'a0', 'b.txt': 'b0', 'c.txt': 'c0' });
    const from = await workspace.snapshot();
    await workspace.write('a.txt', 'a1');
    await workspace.write('b.txt', 'b1');
    await workspace.write('c.txt', 'c1');
    await workspace.write('d.txt', 'd1');
    const dest = tempDir();
    writeFileSync(join(dest, 'a.txt'), 'a0');
    writeFileSync(join(dest, 'b.txt'), 'edited by someone');
    writeFileSync(join(dest, 'c.txt'), 'c1'); // already the new content: not a conflict
    writeFileSync(join(dest, 'd.txt'), 'there first');
    const before = filesOf(dest);
    const conflicts = [
      { path: 'b.txt', reason: 'changed at the destination since the baseline' },
      { path: 'd.txt', reason: 'exists at the destination with other content' },
    ];

    const failing = exportTo(workspace, dest, { allowedHostRoots: [dest], from });
    await expect(failing).rejects.toBeInstanceOf(ExportConflictError);
    await expect(failing).rejects.toMatchObject({ code: 'ECONFLICT', conflicts });
    expect(filesOf(dest)).toEqual(before);

    const dry = await exportTo(workspace, dest, { allowedHostRoots: [dest], from, dryRun: true });
    expect(dry).toEqual({ written: ['a.txt'], deleted: [], conflicts, dryRun: true });
    const dryOverwrite = await exportTo(workspace, dest, { allowedHostRoots: [dest], from, dryRun: true, onConflict: 'overwrite' });
    expect(dryOverwrite.written).toEqual(['a.txt', 'b.txt', 'd.txt']);
    expect(filesOf(dest)).toEqual(before);

    expect(await exportTo(workspace, dest, { allowedHostRoots: [dest], from, onConflict: 'skip' })).toEqual({
      written: ['a.txt'],
      deleted: [],
      conflicts,
      dryRun: false,
    });
    expect(readFileSync(join(dest, 'b.txt'), 'utf8')).toBe('edited by someone');
    const overwritten = await exportTo(workspace, dest, { allowedHostRoots: [dest], from, onConflict: 'overwrite' });
    expect(overwritten.written).toEqual(['b.txt', 'd.txt']);
    expect(filesOf(dest)).toEqual({
      'a.txt': 'file 100644 a1',
      'b.txt': 'file 100644 b1',
      'c.txt': 'file 100644 c1',
      'd.txt': 'file 100644 d1',
    });
    await workspace.dispose();
  });

  it('refuses bad input before writing anything', async () => {
    const workspace = await open({ 'd/x.txt': 'x', 'top.txt': 't' });
    const allowed = tempDir();
    const outside = tempDir();
    await expect(exportTo(workspace, join(outside, 'out'), { allowedHostRoots: [allowed] })).rejects.toMatchObject({ code: 'EACCES' });
    expect(existsSync(join(outside, 'out'))).toBe(false);
    await expect(exportTo(workspace, allowed, { allowedHostRoots: [] })).rejects.toMatchObject({ code: 'EACCES' });
    await expect(exportTo(workspace, allowed, { allowedHostRoots: [allowed], onConflict: 'merge' as never })).rejects.toMatchObject({
      code: 'EINVAL',
    });

    const other = backend.create();
    const foreign = await other.snapshot();
    await expect(exportTo(workspace, allowed, { allowedHostRoots: [allowed], from: foreign })).rejects.toMatchObject({ code: 'ESNAPSHOT' });
    await other.dispose();

    // A file where the export needs a directory: a typed clash, and top.txt is not written either.
    writeFileSync(join(allowed, 'd'), 'a file');
    await expect(exportTo(workspace, allowed, { allowedHostRoots: [allowed] })).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(readdirSync(allowed)).toEqual(['d']);

    // A directory where the export must put a file: a typed clash too, and nothing is written.
    const clash = tempDir();
    mkdirSync(join(clash, 'top.txt'));
    writeFileSync(join(clash, 'top.txt', 'kept'), 'k');
    await expect(exportTo(workspace, clash, { allowedHostRoots: [clash] })).rejects.toMatchObject({ code: 'EISDIR', path: 'top.txt' });
    await expect(exportTo(workspace, clash, { allowedHostRoots: [clash], onConflict: 'overwrite' })).rejects.toMatchObject({
      code: 'EISDIR',
    });
    expect(filesOf(clash)).toEqual({ 'top.txt/kept': 'file 100644 k' });
    await workspace.dispose();
  });

  it('never writes through a symlink at the destination', async () => {
    const workspace = await open({ 'd/x.txt': 'x' });
    const dest = tempDir();
    const outside = tempDir();
    symlinkSync(outside, join(dest, 'd'));
    await expect(exportTo(workspace, dest, { allowedHostRoots: [dest] })).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(readdirSync(outside)).toEqual([]);
    // A link at the file's own path is replaced as a link, never written through.
    const dest2 = tempDir();
    mkdirSync(join(dest2, 'd'));
    writeFileSync(join(outside, 'target'), 'outside');
    symlinkSync(join(outside, 'target'), join(dest2, 'd', 'x.txt'));
    await expect(exportTo(workspace, dest2, { allowedHostRoots: [dest2] })).rejects.toMatchObject({ code: 'ECONFLICT' });
    await exportTo(workspace, dest2, { allowedHostRoots: [dest2], onConflict: 'overwrite' });
    expect(readFileSync(join(outside, 'target'), 'utf8')).toBe('outside');
    expect(filesOf(dest2)).toEqual({ 'd/x.txt': 'file 100644 x' });
    await workspace.dispose();
  });
});

describe('exportTo from a host workspace', () => {
  const tempDir = tempDirs();

  it('keeps exec bits and symlinks', async () => {
    const workspace = createWorkspace(hostDriver());
    await workspace.write('run.sh', 'echo\n');
    chmodSync(join(workspace.root, 'run.sh'), 0o755);
    symlinkSync('run.sh', join(workspace.root, 'link'));
    const dest = tempDir();
    await exportTo(workspace, dest, { allowedHostRoots: [dest] });
    expect(filesOf(dest)).toEqual({ 'run.sh': 'file 100755 echo\n', link: 'link run.sh' });
    // An exec bit the workspace removed is removed at the destination too.
    const from = await workspace.snapshot();
    chmodSync(join(workspace.root, 'run.sh'), 0o644);
    expect(await exportTo(workspace, dest, { allowedHostRoots: [dest], from })).toMatchObject({ written: ['run.sh'], conflicts: [] });
    expect(filesOf(dest)['run.sh']).toBe('file 100644 echo\n');
    await workspace.dispose();
  });
});
