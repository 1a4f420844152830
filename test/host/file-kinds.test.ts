import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withExecutable } from '../../src/host-files/file-mode.js';
import { kindsOf, plantKinds } from '../../src/testing/file-kinds.js';
import { bytes } from '../../src/testing/harness.js';
import { scratch } from './support.js';

const modeOf = (path: string): number => fs.statSync(path).mode & 0o7777;

describe('host file kinds: permission bits', () => {
  const { workspace, dir } = scratch();

  it('sets and clears execute as chmod +x / -x under git’s 0644/0755 convention, keeping the other bits', () => {
    expect(withExecutable(0o644, true)).toBe(0o755);
    expect(withExecutable(0o755, false)).toBe(0o644);
    expect(withExecutable(0o640, true)).toBe(0o750);
    expect(withExecutable(0o600, true)).toBe(0o700);
    expect(withExecutable(0o200, true)).toBe(0o300);
    expect(withExecutable(0o2751, false)).toBe(0o2640);
    expect(withExecutable(0o100640, undefined)).toBe(0o640);
  });

  it('setExecutable and write({ executable }) change only the execute bits of the file on disk', async () => {
    const ws = workspace();
    await ws.write('private.sh', 'x');
    fs.chmodSync(join(ws.root, 'private.sh'), 0o600);
    await ws.setExecutable('private.sh', true);
    expect(modeOf(join(ws.root, 'private.sh'))).toBe(0o700);
    await ws.write('private.sh', 'y', { executable: false });
    expect(modeOf(join(ws.root, 'private.sh'))).toBe(0o600);
    await ws.writeBytes('private.sh', bytes('z'), { mode: 'append', executable: true });
    expect(modeOf(join(ws.root, 'private.sh'))).toBe(0o700);
    expect(fs.readFileSync(join(ws.root, 'private.sh'), 'utf8')).toBe('yz');
    await ws.write('new.sh', 'x', { executable: true, mode: 'create' });
    expect(modeOf(join(ws.root, 'new.sh'))).toBe(0o755);
  });

  it('a write stream commits with the executable bit asked for', async () => {
    const ws = workspace();
    const stream = await ws.createWriteStream('streamed.sh', { executable: true });
    const writer = stream.getWriter();
    await writer.write(bytes('#!/bin/sh\n'));
    await writer.close();
    expect(modeOf(join(ws.root, 'streamed.sh'))).toBe(0o755);
    const again = (await ws.createWriteStream('streamed.sh')).getWriter();
    await again.write(bytes('echo\n'));
    await again.close();
    expect((await ws.stat('streamed.sh')).executable).toBe(true);
  });

  it('setExecutable through a link changes its target, never a file outside the root', async () => {
    const ws = workspace();
    const outside = join(dir(), 'outside.sh');
    fs.writeFileSync(outside, 'x', { mode: 0o644 });
    await ws.write('real.sh', 'x');
    await ws.symlink('real.sh', 'link.sh');
    await ws.setExecutable('link.sh', true);
    expect(modeOf(join(ws.root, 'real.sh'))).toBe(0o755);
    fs.symlinkSync(outside, join(ws.root, 'out.sh'));
    await expect(ws.setExecutable('out.sh', true)).rejects.toMatchObject({ code: 'EACCES' });
    expect(modeOf(outside)).toBe(0o644);
  });

  it('creates links as given on disk, never through a parent link leading out', async () => {
    const ws = workspace();
    const outside = dir();
    await ws.symlink('../../anywhere', 'deep/link');
    expect(fs.readlinkSync(join(ws.root, 'deep/link'))).toBe('../../anywhere');
    fs.symlinkSync(outside, join(ws.root, 'out'));
    await expect(ws.symlink('x', 'out/planted')).rejects.toMatchObject({ code: 'EACCES' });
    expect(fs.readdirSync(outside)).toEqual([]);
    await expect(ws.readlink('out/planted')).rejects.toMatchObject({ code: 'EACCES' });
  });

  it('bulk writes put links over files and links, refuse a directory, and follow a parent link inside the root', async () => {
    const ws = workspace();
    await ws.write('file', 'x');
    await ws.symlink('file', 'old-link');
    await ws.mkdir('real/dir');
    await ws.symlink('real', 'via');
    await ws.writeFiles?.([
      { kind: 'symlink', path: 'file', target: 'a' },
      { kind: 'symlink', path: 'old-link', target: 'b' },
      { kind: 'symlink', path: 'via/inner', target: 'c' },
      { kind: 'file', path: 'via/run', content: bytes('r'), executable: true },
    ]);
    expect(fs.readlinkSync(join(ws.root, 'file'))).toBe('a');
    expect(fs.readlinkSync(join(ws.root, 'old-link'))).toBe('b');
    expect(fs.readlinkSync(join(ws.root, 'real/inner'))).toBe('c');
    expect(modeOf(join(ws.root, 'real/run'))).toBe(0o755);
    await expect(ws.writeFiles?.([{ kind: 'symlink', path: 'real/dir', target: 'd' }])).rejects.toMatchObject({ code: 'EISDIR' });
    expect(fs.lstatSync(join(ws.root, 'real/dir')).isDirectory()).toBe(true);
  });
});

for (const changeDetection of ['scan', 'tracked'] as const) {
  describe(`host file kinds in snapshots (${changeDetection})`, () => {
    const { workspace } = scratch();

    it('a mode change alone is seen by the next snapshot, diffed, and restored', async () => {
      const ws = workspace({ changeDetection });
      await plantKinds(ws);
      const planted = await ws.snapshot();
      await ws.setExecutable('bin/run.sh', false);
      await ws.setExecutable('src/lib/a.txt', true);
      const flipped = await ws.snapshot();
      expect((await ws.diff(planted, flipped)).map((entry) => `${entry.status} ${entry.path}`)).toEqual([
        'modified bin/run.sh',
        'modified src/lib/a.txt',
      ]);
      const tree = await ws.snapshotTree(flipped);
      expect(await tree.entry('bin/run.sh')).toMatchObject({ executable: false });
      expect(await tree.entry('src/lib/a.txt')).toMatchObject({ executable: true });
      await ws.restore(planted);
      expect(modeOf(join(ws.root, 'bin/run.sh'))).toBe(0o755);
      expect(modeOf(join(ws.root, 'src/lib/a.txt'))).toBe(0o644);
      await ws.restore(flipped);
      expect(await kindsOf(ws)).toMatchObject({ 'bin/run.sh': '100644 #!/bin/sh\necho hi\n', 'src/lib/a.txt': '100755 a\n' });
    });

    it('a link retargeted or replaced by a file is seen, diffed, and restored as a link', async () => {
      const ws = workspace({ changeDetection });
      await plantKinds(ws);
      const planted = await ws.snapshot();
      const before = await kindsOf(ws);
      await ws.delete('lib-dir');
      await ws.symlink('bin', 'lib-dir');
      await ws.delete('dangling');
      await ws.write('dangling', 'a file now');
      await ws.writeFiles?.([{ kind: 'symlink', path: 'src/a-link.txt', target: 'lib' }]);
      const changed = await ws.snapshot();
      expect((await ws.diff(planted, changed)).map((entry) => entry.path)).toEqual(['dangling', 'lib-dir', 'src/a-link.txt']);
      await ws.restore(planted);
      expect(await kindsOf(ws)).toEqual(before);
      expect(fs.readlinkSync(join(ws.root, 'lib-dir'))).toBe('src/lib');
      expect(await ws.diff(planted)).toEqual([]);
    });
  });
}
