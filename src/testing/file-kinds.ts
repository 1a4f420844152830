import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import type { WatchEvent } from '../workspace/watch-event.js';
import { bytes, contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

/** Every entry with its kind as git records it: `100644`/`100755` and the bytes, `120000` and the target, `dir`. */
export async function kindsOf(ws: SnapshotableWorkspace, base = '/'): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await ws.list(base)) {
    if (entry.isSymlink) out[entry.path] = `120000 ${await ws.readlink(entry.path)}`;
    else if (entry.isDirectory) {
      out[`${entry.path}/`] = 'dir';
      Object.assign(out, await kindsOf(ws, entry.path));
    } else {
      const mode = (await ws.stat(entry.path)).executable ? '100755' : '100644';
      out[entry.path] = `${mode} ${Buffer.from((await ws.readBytes(entry.path)).content).toString('latin1')}`;
    }
  }
  return out;
}

/** The tree the round trips use: an executable script, a relative link, a link to a directory, a dangling link. */
export async function plantKinds(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('bin/run.sh', '#!/bin/sh\necho hi\n', { executable: true });
  await ws.write('src/lib/a.txt', 'a\n');
  await ws.symlink('lib/a.txt', 'src/a-link.txt');
  await ws.symlink('src/lib', 'lib-dir');
  await ws.symlink('missing/nowhere.txt', 'dangling');
}

/**
 * File kinds (executable files and symlinks, as git records a tree) on a backend that has them, and, on
 * one without (`harness.fileKinds === false`), `NotSupportedError` for every request for one.
 */
export function fileKinds(harness: ComplianceHarness): void {
  if (harness.fileKinds === false) {
    withoutFileKinds(harness);
    return;
  }
  describe('file kinds', () => {
    const create = workspaces(harness);

    it('writes executable files, keeps the bit on overwrite and append, and clears it on request', async () => {
      const ws = await create();
      await ws.write('run.sh', 'echo 1\n', { executable: true });
      expect(await ws.stat('run.sh')).toMatchObject({ isFile: true, executable: true, isSymlink: false });
      await ws.write('run.sh', 'echo 2\n');
      expect((await ws.stat('run.sh')).executable).toBe(true);
      await ws.writeBytes('run.sh', bytes('echo 3\n'), { mode: 'append' });
      expect((await ws.stat('run.sh')).executable).toBe(true);
      await ws.write('run.sh', 'echo 4\n', { executable: false });
      expect((await ws.stat('run.sh')).executable).toBe(false);
      await ws.write('plain.txt', 'x');
      expect((await ws.stat('plain.txt')).executable).toBe(false);
      await ws.mkdir('dir');
      expect((await ws.stat('dir')).executable).toBe(false);
      expect((await ws.read('run.sh')).content).toBe('echo 4');
    });

    it('setExecutable sets and clears the bit, changes the version, and refuses directories and bad input', async () => {
      const ws = await create();
      await ws.write('tool', 'x');
      const before = (await ws.stat('tool')).version;
      await ws.setExecutable('tool', true);
      const after = await ws.stat('tool');
      expect(after.executable).toBe(true);
      if (before !== undefined) expect(after.version).not.toBe(before);
      await ws.setExecutable('tool', true);
      expect((await ws.stat('tool')).executable).toBe(true);
      await ws.setExecutable('tool', false);
      expect((await ws.stat('tool')).executable).toBe(false);
      await ws.mkdir('dir');
      await expectError(ws.setExecutable('dir', true), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.setExecutable('missing', true), 'FileNotFoundError', 'ENOENT');
      await expectError(ws.setExecutable('tool', 'yes' as unknown as boolean), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.write('x', 'x', { executable: 1 as unknown as boolean }), 'InvalidArgumentError', 'EINVAL');
      expect(await ws.exists('x')).toBe(false);
    });

    it('creates symlinks as data: readlink gives the target, stat follows it inside the workspace', async () => {
      const ws = await create();
      await ws.write('lib/tool.sh', 'echo tool\n', { executable: true });
      await ws.symlink('lib/tool.sh', 'tool');
      expect(await ws.readlink('tool')).toBe('lib/tool.sh');
      expect(await ws.stat('tool')).toMatchObject({
        path: 'tool',
        isSymlink: true,
        isFile: true,
        isDirectory: false,
        executable: true,
        linkTarget: 'lib/tool.sh',
        sizeBytes: 10,
      });
      expect((await ws.stat('lib/tool.sh')).linkTarget).toBeUndefined();
      expect((await ws.read('tool')).content).toBe('echo tool');
      expect((await ws.list('/')).find((entry) => entry.name === 'tool')).toEqual({
        name: 'tool',
        path: 'tool',
        isFile: true,
        isDirectory: false,
        isSymlink: true,
      });
      await ws.symlink('../lib', 'deep/nested/up');
      expect(await ws.stat('deep/nested')).toMatchObject({ isDirectory: true });
      expect(await ws.readlink('deep/nested/up')).toBe('../lib');
    });

    it('refuses to create a link where something exists, and refuses bad targets, writing nothing', async () => {
      const ws = await create();
      await ws.write('file.txt', 'x');
      await ws.mkdir('dir');
      await expectError(ws.symlink('file.txt', 'file.txt'), 'FileExistsError', 'EEXIST');
      await expectError(ws.symlink('file.txt', 'dir'), 'FileExistsError', 'EEXIST');
      await ws.symlink('file.txt', 'link');
      await expectError(ws.symlink('dir', 'link'), 'FileExistsError', 'EEXIST');
      for (const target of ['', 'a\0b', 42 as unknown as string, 'x'.repeat(5000)])
        await expectError(ws.symlink(target, 'bad'), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.symlink('x', '../out'), 'PathEscapeError', 'EACCES');
      await expectError(ws.readlink('file.txt'), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.readlink('dir'), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.readlink('missing'), 'FileNotFoundError', 'ENOENT');
      expect(await ws.exists('bad')).toBe(false);
      expect(await ws.readlink('link')).toBe('file.txt');
    });

    it('follows links to directories and chains of links, and reports a dangling link as itself', async () => {
      const ws = await create();
      await ws.write('real/dir/a.txt', 'a');
      await ws.symlink('real/dir', 'd1');
      await ws.symlink('d1', 'd2');
      await ws.symlink('d2/a.txt', 'chain');
      expect((await ws.read('d2/a.txt')).content).toBe('a');
      expect((await ws.read('chain')).content).toBe('a');
      expect((await ws.list('d2')).map((entry) => entry.name)).toEqual(['a.txt']);
      expect(await ws.stat('d1')).toMatchObject({ isDirectory: true, isSymlink: true, linkTarget: 'real/dir' });
      await ws.symlink('nowhere/x.txt', 'dangling');
      expect(await ws.stat('dangling')).toMatchObject({ isSymlink: true, isFile: false, isDirectory: false, linkTarget: 'nowhere/x.txt' });
      expect(await ws.exists('dangling')).toBe(false);
      await expectError(ws.read('dangling'), 'FileNotFoundError', 'ENOENT');
      expect(await ws.readlink('dangling')).toBe('nowhere/x.txt');
      expect((await ws.list('/')).find((entry) => entry.name === 'dangling')).toMatchObject({ isSymlink: true, isFile: false });
    });

    it('stores hostile targets but never follows them out: absolute, `..` chains, loops (ELOOP)', async () => {
      const ws = await create();
      await ws.symlink('/etc/passwd', 'abs');
      await ws.symlink('../../../../../../etc/passwd', 'climb');
      await ws.symlink('../../x', 'sub/escape');
      await ws.symlink('loop-b', 'loop-a');
      await ws.symlink('loop-a', 'loop-b');
      await ws.symlink('self', 'self');
      expect(await ws.readlink('abs')).toBe('/etc/passwd');
      expect(await ws.readlink('climb')).toBe('../../../../../../etc/passwd');
      for (const link of ['abs', 'climb', 'sub/escape']) {
        await expectError(ws.read(link), 'PathEscapeError', 'EACCES');
        await expectError(ws.stat(link), 'PathEscapeError', 'EACCES');
        await expectError(ws.write(link, 'planted'), 'PathEscapeError', 'EACCES');
        expect(await ws.exists(link)).toBe(false);
      }
      await expectError(ws.write('abs/inside.txt', 'x'), 'PathEscapeError', 'EACCES');
      for (const link of ['loop-a', 'self']) {
        await expectError(ws.read(link), 'PathEscapeError', 'ELOOP');
        await expectError(ws.write(link, 'x'), 'PathEscapeError', 'ELOOP');
      }
      await expectError(ws.read('loop-a/x'), 'PathEscapeError', 'ELOOP');
      expect((await ws.list('/')).filter((entry) => entry.isSymlink).map((entry) => entry.name)).toEqual([
        'abs',
        'climb',
        'loop-a',
        'loop-b',
        'self',
      ]);
      expect((await ws.glob('**', { dot: true })).map((match) => match.path)).toEqual([]);
    });

    it('writes through a link inside the workspace to its target, and creates a dangling link’s target', async () => {
      const ws = await create();
      await ws.write('target.txt', 'old');
      await ws.symlink('target.txt', 'link');
      await ws.write('link', 'new');
      expect((await ws.read('target.txt')).content).toBe('new');
      expect(await ws.readlink('link')).toBe('target.txt');
      await ws.mkdir('made');
      await ws.symlink('made/later.txt', 'pending');
      await ws.write('pending', 'created through the link');
      expect((await ws.read('made/later.txt')).content).toBe('created through the link');
      expect((await ws.stat('pending')).isSymlink).toBe(true);
    });

    it('deletes, renames and copies links as links and executable files with their bit', async () => {
      const ws = await create();
      await ws.write('bin/tool', 'x', { executable: true });
      await ws.symlink('bin/tool', 'tool-link');
      await ws.copy('bin/tool', 'copy-of-tool');
      expect((await ws.stat('copy-of-tool')).executable).toBe(true);
      await ws.rename('tool-link', 'moved/tool-link');
      expect(await ws.readlink('moved/tool-link')).toBe('bin/tool');
      await ws.copy('moved/tool-link', 'link-copy');
      expect(await ws.readlink('link-copy')).toBe('bin/tool');
      await ws.copy('bin', 'bin2', { recursive: true });
      expect((await ws.stat('bin2/tool')).executable).toBe(true);
      await ws.delete('link-copy');
      expect((await ws.stat('bin/tool')).executable).toBe(true);
      expect(await kindsOf(ws)).toEqual({
        'bin/': 'dir',
        'bin/tool': '100755 x',
        'bin2/': 'dir',
        'bin2/tool': '100755 x',
        'copy-of-tool': '100755 x',
        'moved/': 'dir',
        'moved/tool-link': '120000 bin/tool',
      });
    });

    it('snapshots, restores and diffs kinds exactly; a mode change alone is a modification', async () => {
      const ws = await create();
      await plantKinds(ws);
      const planted = await kindsOf(ws);
      const snapshot = await ws.snapshot();
      await ws.setExecutable('bin/run.sh', false);
      await ws.setExecutable('src/lib/a.txt', true);
      await ws.delete('src/a-link.txt');
      await ws.write('src/a-link.txt', 'now a file');
      await ws.delete('dangling');
      await ws.symlink('elsewhere', 'dangling');
      await ws.symlink('bin/run.sh', 'new-link');
      expect((await ws.diff(snapshot)).map((entry) => `${entry.status} ${entry.path}`)).toEqual([
        'modified bin/run.sh',
        'modified dangling',
        'added new-link',
        'modified src/a-link.txt',
        'modified src/lib/a.txt',
      ]);
      await ws.restore(snapshot);
      expect(await kindsOf(ws)).toEqual(planted);
      expect(await ws.diff(snapshot)).toEqual([]);
    });

    it('snapshot trees and patches carry git modes (100755, 120000) and mode changes', async () => {
      const ws = await create();
      const empty = await ws.snapshot();
      await plantKinds(ws);
      const tree = await ws.snapshotTree();
      expect(await tree.entry('bin/run.sh')).toMatchObject({ kind: 'file', executable: true });
      expect(await tree.entry('src/lib/a.txt')).toMatchObject({ kind: 'file', executable: false });
      const link = await tree.entry('lib-dir');
      expect(link?.kind).toBe('symlink');
      if (link?.kind === 'symlink') expect(Buffer.from(await link.bytes()).toString()).toBe('src/lib');
      const patch = await ws.patch(empty);
      expect(patch).toContain('diff --git a/bin/run.sh b/bin/run.sh\nnew file mode 100755');
      expect(patch).toContain('diff --git a/dangling b/dangling\nnew file mode 120000');
      const planted = await ws.snapshot();
      await ws.setExecutable('bin/run.sh', false);
      expect(await ws.patch(planted)).toBe('diff --git a/bin/run.sh b/bin/run.sh\nold mode 100755\nnew mode 100644\n');
    });

    it('bulk writes create links and executable files', async () => {
      const ws = await create();
      await ws.writeFiles?.([
        { kind: 'file', path: 'bin/x', content: bytes('x'), executable: true },
        { kind: 'symlink', path: 'x-link', target: 'bin/x' },
        { kind: 'file', path: 'x-link-replaced', content: bytes('y') },
        { kind: 'symlink', path: 'x-link-replaced', target: 'bin/x' },
      ]);
      expect(await kindsOf(ws)).toEqual({
        'bin/': 'dir',
        'bin/x': '100755 x',
        'x-link': '120000 bin/x',
        'x-link-replaced': '120000 bin/x',
      });
    });

    it('tells watchers: a new link is created, a mode change modifies', async () => {
      const ws = await create();
      await ws.write('f', 'x');
      const controller = new AbortController();
      const events: WatchEvent[] = [];
      const watching = (async () => {
        for await (const event of ws.watch({ signal: controller.signal })) {
          events.push(event);
          if (events.length === 2) break;
        }
      })();
      await ws.symlink('f', 'l');
      await ws.setExecutable('f', true);
      await watching;
      controller.abort();
      expect(events.map((event) => `${event.type} ${event.path}`)).toEqual(['created l', 'modified f']);
    });

    it('a read-only workspace refuses setExecutable and symlink', async () => {
      const ws = await create({ readOnly: true });
      await expectError(ws.setExecutable('f', true), 'ReadOnlyError', 'EROFS');
      await expectError(ws.symlink('f', 'l'), 'ReadOnlyError', 'EROFS');
      await expectError(ws.write('f', 'x', { executable: true }), 'ReadOnlyError', 'EROFS');
    });

    it('a fork keeps kinds', async () => {
      const ws = await create();
      await plantKinds(ws);
      const fork = await (ws as SnapshotableWorkspace & { fork?: () => Promise<SnapshotableWorkspace> })
        .fork?.()
        .catch((error: Error & { code?: string }) => {
          if (error.code === 'ENOTSUP') return undefined;
          throw error;
        });
      if (fork === undefined) return;
      try {
        expect(await kindsOf(fork)).toEqual(await kindsOf(ws));
      } finally {
        await fork.dispose();
      }
    });
  });
}

function withoutFileKinds(harness: ComplianceHarness): void {
  describe('file kinds (a backend without them)', () => {
    const create = workspaces(harness);

    it('answers NotSupportedError for an executable bit or a link, changing nothing', async () => {
      const ws = await create();
      await ws.write('f', 'x');
      await expectError(ws.setExecutable('f', true), 'NotSupportedError', 'ENOTSUP');
      await expectError(ws.symlink('f', 'l'), 'NotSupportedError', 'ENOTSUP');
      await expectError(ws.write('g', 'y', { executable: true }), 'NotSupportedError', 'ENOTSUP');
      await expectError(
        ws.writeFiles?.([
          { kind: 'file', path: 'h', content: bytes('h') },
          { kind: 'symlink', path: 'l', target: 'f' },
        ]) ?? Promise.resolve(),
        'NotSupportedError',
        'ENOTSUP',
      );
      await ws.write('f', 'z', { executable: false });
      expect(await ws.stat('f')).toMatchObject({ executable: false, isSymlink: false });
      await expectError(ws.readlink('f'), 'InvalidArgumentError', 'EINVAL');
      expect(await contentsOf(ws)).toEqual({ f: 'z' });
    });
  });
}
