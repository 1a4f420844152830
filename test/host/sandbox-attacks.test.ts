import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import fsDefault from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, expectNoHostPath } from '../../src/testing/harness.js';
import { scratch, hostOf } from './support.js';

/** Review attacks on the host backend: hostile paths, and links planted in the root between calls. */
describe('host sandbox attacks', () => {
  const { workspace, dir } = scratch();

  function setup(options: Parameters<typeof workspace>[0] = {}) {
    const outside = dir('sessionfs-outside-');
    fs.writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    fs.mkdirSync(join(outside, 'sub'));
    fs.writeFileSync(join(outside, 'sub', 'inner.txt'), 'inner secret\n');
    const ws = workspace(options);
    return { ws, outside, hostPaths: [ws.root, outside] };
  }
  const outsideTree = (outside: string) => ({
    top: fs.readdirSync(outside).sort(),
    sub: fs.readdirSync(join(outside, 'sub')).sort(),
    secret: fs.readFileSync(join(outside, 'secret.txt'), 'utf8'),
  });
  const pristine = { top: ['secret.txt', 'sub'], sub: ['inner.txt'], secret: 'secret\n' };

  it('rename and copy whose target parent is an escaping link are refused', async () => {
    const { ws, outside, hostPaths } = setup();
    await ws.write('f.txt', 'mine');
    await ws.write('d/x.txt', 'x');
    await ws.write('e/y.txt', 'y');
    fs.symlinkSync(outside, join(ws.root, 'out'));
    fs.symlinkSync(join(outside, 'sub'), join(ws.root, 'd', 'outsub'));
    for (const target of ['out/f.txt', 'out/sub/f.txt', 'd/outsub/f.txt', 'out/new/dir/f.txt']) {
      await expectError(ws.rename('f.txt', target), 'PathEscapeError', 'EACCES', { hostPaths });
      await expectError(ws.copy('f.txt', target), 'PathEscapeError', 'EACCES', { hostPaths });
      await expectError(ws.copy('e', target, { recursive: true }), 'PathEscapeError', 'EACCES', { hostPaths });
      await expectError(ws.rename('e', target), 'PathEscapeError', 'EACCES', { hostPaths });
    }
    await expectError(ws.rename('f.txt', 'out/secret.txt', { overwrite: true }), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(outsideTree(outside)).toEqual(pristine);
  });

  it('copy of a directory holding escaping links copies the links as links', async () => {
    const { ws, outside } = setup();
    await ws.write('d/a.txt', 'a');
    fs.symlinkSync(outside, join(ws.root, 'd', 'outdir'));
    fs.symlinkSync(join(outside, 'secret.txt'), join(ws.root, 'd', 'outfile'));
    fs.symlinkSync('../'.repeat(30) + outside.slice(1), join(ws.root, 'd', 'relout'));
    await ws.copy('d', 'e', { recursive: true });
    for (const name of ['outdir', 'outfile', 'relout']) {
      expect(fs.lstatSync(join(ws.root, 'e', name)).isSymbolicLink()).toBe(true);
      expect(fs.readlinkSync(join(ws.root, 'e', name))).toBe(fs.readlinkSync(join(ws.root, 'd', name)));
    }
    await ws.copy('d/outfile', 'single');
    expect(fs.lstatSync(join(ws.root, 'single')).isSymbolicLink()).toBe(true);
    expect(await ws.grep('secret')).toEqual([]);
    expect(outsideTree(outside)).toEqual(pristine);
  });

  it('recursive delete of a directory holding links to outside directories removes only the links', async () => {
    const { ws, outside } = setup();
    await ws.write('d/deep/a.txt', 'a');
    fs.symlinkSync(outside, join(ws.root, 'd', 'outdir'));
    fs.symlinkSync(join(outside, 'sub'), join(ws.root, 'd', 'deep', 'outsub'));
    fs.symlinkSync(join(outside, 'secret.txt'), join(ws.root, 'd', 'deep', 'outfile'));
    await ws.delete('d', { recursive: true });
    expect(fs.existsSync(join(ws.root, 'd'))).toBe(false);
    expect(outsideTree(outside)).toEqual(pristine);
    // Through a link to a directory inside the root: the real directory goes, the link stays dangling.
    await ws.write('real/b.txt', 'b');
    fs.symlinkSync('real', join(ws.root, 'alias'));
    await ws.delete('alias');
    expect(fs.existsSync(join(ws.root, 'real', 'b.txt'))).toBe(true);
  });

  it('links to the root itself, to .., chains, and dangling links later pointed outside', async () => {
    const { ws, outside, hostPaths } = setup();
    fs.symlinkSync('.', join(ws.root, 'self'));
    fs.symlinkSync(ws.root, join(ws.root, 'absself'));
    fs.symlinkSync('..', join(ws.root, 'up'));
    fs.mkdirSync(join(ws.root, 'a'));
    fs.symlinkSync('..', join(ws.root, 'a', 'back')); // the root: fine
    fs.symlinkSync('back/up', join(ws.root, 'a', 'chain')); // root/up = .. : escapes
    await ws.write('self/self/absself/x.txt', 'x');
    expect(fs.readFileSync(join(ws.root, 'x.txt'), 'utf8')).toBe('x');
    await expectError(ws.list('up'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('a/chain/evil.txt', 'x'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.mkdir('up/evil'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('self', 'x'), 'IsADirectoryError', 'EISDIR', { hostPaths });
    await expectError(ws.delete('a/back/self/a/chain/z'), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await ws.exists('up')).toBe(false);
    expect(await ws.exists('a/chain')).toBe(false);
    // Deleting a link to the root removes the link only.
    await ws.delete('self');
    expect(fs.existsSync(join(ws.root, 'x.txt'))).toBe(true);
    // A dangling link pointing inside, later re-pointed outside between calls.
    fs.symlinkSync('not-yet', join(ws.root, 'later'));
    expect((await ws.stat('later')).isSymlink).toBe(true);
    // As Node's existsSync: a dangling link is there (stat shows it) but leads to nothing.
    expect(await ws.exists('later')).toBe(false);
    fs.unlinkSync(join(ws.root, 'later'));
    fs.symlinkSync(join(outside, 'created.txt'), join(ws.root, 'later'));
    await expectError(ws.stat('later'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('later', 'x'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.mkdir('later/d'), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await ws.exists('later')).toBe(false);
    // A link whose target names a missing directory then climbs: never lands on something else.
    fs.symlinkSync(outside, join(ws.root, 'outdir'));
    fs.symlinkSync('missing/../outdir/sub', join(ws.root, 'tricky'));
    await expectError(ws.write('tricky/f.txt', 'x'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.mkdir('tricky/g'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.copy('x.txt', 'tricky/f.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.rename('x.txt', 'tricky/f.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    fs.symlinkSync('loop', join(ws.root, 'loop'));
    await expectError(ws.read('loop'), 'PathEscapeError', 'ELOOP', { hostPaths });
    expect(await ws.exists('loop')).toBe(false);
    expect(outsideTree(outside)).toEqual(pristine);
  });

  it('names that collide with the escaping scheme or with git survive snapshot, restore and diff', async () => {
    const ws = workspace();
    const names = ['%', '%%', '%.git', '.git/hooks/pre-commit', '.GIT/config', 'x/.Git/HEAD', '%empty/%', 'git', '.gitmodules'];
    for (const name of names) await ws.write(name, `content of ${name}`);
    await ws.mkdir('%dir');
    await ws.mkdir('.git/objects');
    const snap = await ws.snapshot();
    expect(await ws.diff(snap)).toEqual([]);
    for (const name of names) await ws.write(name, 'changed');
    await ws.delete('%dir');
    await ws.write('%new', 'n');
    expect((await ws.diff(snap)).map((d) => d.path).sort()).toEqual([...names, '%new'].sort());
    await ws.restore(snap);
    for (const name of names) expect((await ws.read(name)).content).toBe(`content of ${name}`);
    expect((await ws.stat('%dir')).isDirectory).toBe(true);
    expect(await ws.list('.git/objects')).toEqual([]);
    expect(await ws.exists('%new')).toBe(false);
    // The git dir's own hooks are never run and are not reachable.
    expect(fs.existsSync(join(hostOf(ws).gitDir, 'hooks', 'pre-commit'))).toBe(false);
    // A second workspace on the same git dir sees the same content.
    const other = workspace({ gitDir: hostOf(ws).gitDir });
    await other.restore(snap);
    for (const name of names) expect((await other.read(name)).content).toBe(`content of ${name}`);
  });

  it('restore never writes outside when a directory became a link to outside (scan and tracked)', async () => {
    for (const changeDetection of ['scan', 'tracked'] as const) {
      const { ws, outside } = setup({ changeDetection });
      await ws.write('d/inner/file.txt', 'one');
      await ws.write('d/keep.txt', 'keep');
      const snap = await ws.snapshot();
      await ws.write('d/inner/file.txt', 'two');
      await ws.write('d/inner/added.txt', 'added');
      // Between calls, a co-process swaps d/inner (and d) for links to the outside.
      fs.rmSync(join(ws.root, 'd', 'inner'), { recursive: true });
      fs.symlinkSync(join(outside, 'sub'), join(ws.root, 'd', 'inner'));
      await ws.restore(snap);
      expect(outsideTree(outside)).toEqual(pristine);
      expect(fs.lstatSync(join(ws.root, 'd', 'inner')).isDirectory()).toBe(true);
      expect(fs.readdirSync(join(ws.root, 'd', 'inner'))).toEqual(['file.txt']);
      await ws.write('d/inner/file.txt', 'three');
      fs.renameSync(join(ws.root, 'd'), join(ws.root, 'd-moved'));
      fs.symlinkSync(outside, join(ws.root, 'd'));
      await ws.restore(snap);
      expect(outsideTree(outside)).toEqual(pristine);
      expect(fs.readFileSync(join(ws.root, 'd', 'inner', 'file.txt'), 'utf8')).toBe('one');
    }
  });

  it('restore when a file became a directory and a directory became a file', async () => {
    const ws = workspace({ exclude: ['**/*.log'] });
    await ws.write('f', 'file');
    await ws.write('d/a.txt', 'a');
    const snap = await ws.snapshot();
    fs.rmSync(join(ws.root, 'f'));
    fs.mkdirSync(join(ws.root, 'f'));
    fs.writeFileSync(join(ws.root, 'f', 'x.txt'), 'x');
    fs.rmSync(join(ws.root, 'd'), { recursive: true });
    fs.writeFileSync(join(ws.root, 'd'), 'now a file');
    expect(await ws.restore(snap)).toMatchObject({ skipped: [], receipt: { matches: true } });
    expect(fs.readFileSync(join(ws.root, 'f'), 'utf8')).toBe('file');
    expect(fs.readFileSync(join(ws.root, 'd', 'a.txt'), 'utf8')).toBe('a');
    // Excluded content under a changed directory is kept, and the entry that would remove it is reported.
    await ws.write('d/a.txt', 'changed');
    await ws.write('d/sub/trace.log', 'log');
    await ws.write('d/sub/other.txt', 'other');
    const result = await ws.restore(snap);
    expect(result.skipped.map((s) => s.path)).toEqual(['d/sub']);
    expect(fs.readFileSync(join(ws.root, 'd', 'a.txt'), 'utf8')).toBe('a');
    expect(fs.readdirSync(join(ws.root, 'd', 'sub'))).toEqual(['trace.log']);
  });

  it('a tracked restore that had to keep a directory does not leave the next snapshot believing its file is there', async () => {
    const ws = workspace({ changeDetection: 'tracked', exclude: ['**/*.log'] });
    await ws.write('out', 'v1');
    const v1 = await ws.snapshot();
    await ws.write('out', 'v2');
    await ws.snapshot();
    // Behind the workspace's back (unmarked), `out` becomes a directory with excluded content.
    fs.rmSync(join(ws.root, 'out'));
    fs.mkdirSync(join(ws.root, 'out'));
    fs.writeFileSync(join(ws.root, 'out', 'x.log'), 'log');
    const result = await ws.restore(v1);
    expect(result.skipped.map((s) => s.path)).toEqual(['out']);
    expect(fs.lstatSync(join(ws.root, 'out')).isDirectory()).toBe(true);
    // The next snapshot holds what is there (an empty directory, its content excluded), not the file `out`.
    const after = await ws.snapshot();
    expect(await ws.diff(v1, after)).toEqual([{ path: 'out', status: 'deleted' }]);
  });

  it('a non-recursive delete never removes a directory whose only content the protocol cannot show', async () => {
    const { ws, hostPaths } = setup();
    fs.mkdirSync(join(ws.root, 'd'));
    fs.writeFileSync(join(ws.root, 'd', 'bad\nname'), 'a host file with a newline in its name');
    fs.mkdirSync(join(ws.root, 'e'));
    fs.writeFileSync(join(ws.root, 'e', '.sessionfs-tmp-0123456789abcdef'), 'a write in flight');
    expect(await ws.list('d')).toEqual([]);
    await expectError(ws.delete('d'), 'DirectoryNotEmptyError', 'ENOTEMPTY', { hostPaths });
    await expectError(ws.delete('e'), 'DirectoryNotEmptyError', 'ENOTEMPTY', { hostPaths });
    expect(fs.readdirSync(join(ws.root, 'd'))).toEqual(['bad\nname']);
    await ws.mkdir('empty');
    await ws.delete('empty');
    await ws.delete('d', { recursive: true });
    expect(fs.existsSync(join(ws.root, 'd'))).toBe(false);
  });

  it('names shaped like temp files cannot be created (they would be invisible to list, walks and snapshots)', async () => {
    const { ws, hostPaths } = setup();
    const reserved = '.sessionfs-tmp-0123456789abcdef';
    await ws.write('a.txt', 'a');
    await expectError(ws.write(reserved, 'x'), 'InvalidPathError', 'EINVAL', { hostPaths });
    await expectError(ws.write(`sub/${reserved}/x.txt`, 'x'), 'InvalidPathError', 'EINVAL', { hostPaths });
    await expectError(ws.mkdir(reserved), 'InvalidPathError', 'EINVAL', { hostPaths });
    await expectError(ws.rename('a.txt', reserved), 'InvalidPathError', 'EINVAL', { hostPaths });
    await expectError(ws.copy('a.txt', reserved), 'InvalidPathError', 'EINVAL', { hostPaths });
    expect(fs.readdirSync(ws.root)).toEqual(['a.txt']);
    // Close to the shape is fine.
    await ws.write('.sessionfs-tmp-0123', 'x');
    expect((await ws.list()).map((e) => e.name)).toContain('.sessionfs-tmp-0123');
  });

  it('stat and exists on dangling and escaping links', async () => {
    const { ws, outside, hostPaths } = setup();
    fs.symlinkSync('nowhere', join(ws.root, 'dangling-in'));
    fs.symlinkSync(join(outside, 'nowhere'), join(ws.root, 'dangling-out'));
    fs.symlinkSync(join(outside, 'sub'), join(ws.root, 'dir-out'));
    expect(await ws.stat('dangling-in')).toMatchObject({ isSymlink: true, isFile: false, isDirectory: false });
    await expectError(ws.stat('dangling-out'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.stat('dir-out'), 'PathEscapeError', 'EACCES', { hostPaths });
    for (const p of ['dangling-out', 'dir-out', 'dir-out/inner.txt', 'dangling-out/x']) expect(await ws.exists(p)).toBe(false);
  });

  it('error messages and causes never carry a host path, whatever fails', async () => {
    const { ws, outside, hostPaths } = setup();
    await ws.write('file', 'f');
    await ws.mkdir('dir');
    fs.symlinkSync(outside, join(ws.root, 'out'));
    const attempts: Array<() => Promise<unknown>> = [
      () => ws.read('missing'),
      () => ws.read('file/x'),
      () => ws.write('file/x', 'x'),
      () => ws.write('dir', 'x'),
      () => ws.mkdir('file'),
      () => ws.mkdir('file/x'),
      () => ws.delete('missing'),
      () => ws.rename('missing', 'x'),
      () => ws.rename('dir', 'file', { overwrite: true }),
      () => ws.copy('file', 'dir', { overwrite: true }),
      () => ws.list('file'),
      () => ws.write('a'.repeat(300), 'x', {}),
      () => ws.write('out/x', 'x'),
      () => ws.read('out/secret.txt'),
      () => ws.readBytes('file', { offset: -1 }),
      () => ws.write('file', 'x', { mode: 'create' }),
    ];
    for (const attempt of attempts) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expectNoHostPath(error as Error, hostPaths);
    }
  });
});

/**
 * A separate process that swaps `dir` for a link to `outside` and back for 1.5 s, holding each state as long
 * as the other; if the workspace recreates `dir` meanwhile, the stray copy is dropped and swapping goes on.
 */
function flip(dir: string, outside: string): Promise<unknown> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('fs'); const [d, real, out] = process.argv.slice(1); const end = Date.now() + 1500;
       const spin = () => { const t = process.hrtime.bigint(); while (process.hrtime.bigint() - t < 200000n); };
       let n = 0; const settle = () => { try { if (fs.existsSync(real)) { try { fs.renameSync(d, d + "-stray-" + n++); } catch {} fs.renameSync(real, d); } } catch {} };
       while (Date.now() < end) { try { fs.renameSync(d, real); fs.symlinkSync(out, d); spin(); fs.unlinkSync(d); fs.renameSync(real, d); spin(); } catch { settle(); } }
       settle();`,
      dir,
      `${dir}-real`,
      outside,
    ],
    { stdio: 'ignore' },
  );
  return new Promise((resolve) => child.on('exit', resolve));
}

describe('host sandbox attacks: a co-process swapping a directory for an escaping link during mutations', () => {
  const { workspace, dir } = scratch();

  it('never writes, creates, renames, copies or deletes outside the root', async () => {
    const outside = dir('sessionfs-outside-');
    const names = Array.from({ length: 12 }, (_, i) => `v${i}`);
    for (const name of names) fs.writeFileSync(join(outside, name), 'OUTSIDE');
    fs.mkdirSync(join(outside, 'tree'));
    fs.writeFileSync(join(outside, 'tree', 'leaf'), 'OUTSIDE');
    const before = fs.readdirSync(outside).sort();
    const ws = workspace();
    for (const name of names) await ws.write(`d/${name}`, 'inside');
    await ws.write('d/tree/leaf', 'inside');
    // The link is held as long as the real directory, so that operations often resolve in one state and act in the other.
    const flipper = flip(join(ws.root, 'd'), outside);
    const end = Date.now() + 1300;
    let round = 0;
    while (Date.now() < end) {
      round += 1;
      const errors = await Promise.allSettled(
        names.map(async (name, i) => {
          const noParents = { createParents: false };
          await ws.write(`d/${name}`, 'PWNED', noParents).catch(() => undefined);
          await ws.write(`d/new${i}`, 'PWNED', { ...noParents, mode: 'create' }).catch(() => undefined);
          await ws.mkdir(`d/dir${i}`, { parents: false }).catch(() => undefined);
          await ws.rename(`d/new${i}`, `d/moved${i}`, { overwrite: true }).catch(() => undefined);
          await ws.copy(`d/moved${i}`, `d/copied${i}`, { overwrite: true }).catch(() => undefined);
          await ws.delete(`d/${name}`).catch(() => undefined);
          await ws.delete(`d/dir${i}`).catch(() => undefined);
          if (i === 0 && round % 2 === 0) await ws.delete('d/tree', { recursive: true }).catch(() => undefined);
          if (i === 0 && round % 2 === 1) await ws.write('d/tree/leaf', 'inside', noParents).catch(() => undefined);
        }),
      );
      for (const result of errors) if (result.status === 'rejected') throw result.reason;
    }
    await flipper;
    expect(fs.readdirSync(outside).sort()).toEqual(before);
    for (const name of names) expect(fs.readFileSync(join(outside, name), 'utf8')).toBe('OUTSIDE');
    expect(fs.readFileSync(join(outside, 'tree', 'leaf'), 'utf8')).toBe('OUTSIDE');
  });

  it('restore never writes or deletes outside the root', async () => {
    const outside = dir('sessionfs-outside-');
    const names = Array.from({ length: 12 }, (_, i) => `v${i}`);
    for (const name of names) fs.writeFileSync(join(outside, name), 'OUTSIDE');
    fs.mkdirSync(join(outside, 'sub'));
    fs.writeFileSync(join(outside, 'sub', 'leaf'), 'OUTSIDE');
    const before = fs.readdirSync(outside).sort();
    const ws = workspace();
    for (const name of names) await ws.write(`d/${name}`, 'inside');
    await ws.write('d/sub/leaf', 'inside');
    const snap = await ws.snapshot();
    const flipper = flip(join(ws.root, 'd'), outside);
    const end = Date.now() + 1300;
    while (Date.now() < end) {
      // Make the restore do work in `d`: changed files, new files and a removed directory.
      await Promise.all(names.map((name) => ws.write(`d/${name}`, 'changed', { createParents: false }).catch(() => undefined)));
      await ws.write('d/extra', 'extra', { createParents: false }).catch(() => undefined);
      await ws.delete('d/sub', { recursive: true }).catch(() => undefined);
      await ws.restore(snap).catch(() => undefined);
    }
    await flipper;
    expect(fs.readdirSync(outside).sort()).toEqual(before);
    for (const name of names) expect(fs.readFileSync(join(outside, name), 'utf8')).toBe('OUTSIDE');
    expect(fs.readFileSync(join(outside, 'sub', 'leaf'), 'utf8')).toBe('OUTSIDE');
    await ws.restore(snap);
    expect(fs.readFileSync(join(ws.root, 'd', 'v0'), 'utf8')).toBe('inside');
  });

  it('a snapshot never captures outside content through a directory swapped during the scan', async () => {
    const outside = dir('sessionfs-outside-');
    const names = Array.from({ length: 40 }, (_, i) => `v${i}`);
    for (const name of names) fs.writeFileSync(join(outside, name), 'OUTSIDE');
    fs.writeFileSync(join(outside, 'only-outside'), 'OUTSIDE');
    for (const changeDetection of ['scan', 'tracked'] as const) {
      const ws = workspace({ changeDetection });
      for (const name of names) await ws.write(`d/${name}`, 'inside');
      const flipper = flip(join(ws.root, 'd'), outside);
      const snapshots = [];
      const end = Date.now() + 1300;
      while (Date.now() < end) {
        ws.markChanged(['d']);
        snapshots.push(await ws.snapshot());
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await flipper;
      for (const snap of snapshots.filter((_, i) => i % Math.ceil(snapshots.length / 40) === 0)) {
        await ws.restore(snap);
        expect(await ws.grep('OUTSIDE', { path: '/' })).toEqual([]);
        expect(await ws.exists('d/only-outside')).toBe(false);
      }
    }
  });

  it('list and glob never show names from a directory swapped for an escaping link', async () => {
    const outside = dir('sessionfs-outside-');
    fs.writeFileSync(join(outside, 'only-outside'), 'OUTSIDE');
    fs.mkdirSync(join(outside, 'sub-outside'));
    const ws = workspace();
    for (let i = 0; i < 20; i += 1) await ws.write(`d/f${i}`, 'inside');
    await ws.write('d/nested/x', 'inside');
    const flipper = flip(join(ws.root, 'd'), outside);
    const seen = new Set<string>();
    const end = Date.now() + 1300;
    while (Date.now() < end) {
      const results = await Promise.allSettled([ws.list('d'), ws.glob('**', { path: 'd' }), ws.list('d/nested'), ws.glob('d/**')]);
      for (const result of results) {
        if (result.status === 'rejected') continue;
        for (const entry of result.value) seen.add(entry.path);
      }
    }
    await flipper;
    expect([...seen].filter((p) => p.includes('outside'))).toEqual([]);
  });
});

describe('host sandbox attacks: a FIFO swapped in after the check', () => {
  const { workspace } = scratch();

  it('neither a read, a copy nor a snapshot blocks on a FIFO that replaced a file after its lstat', async () => {
    const ws = workspace();
    await ws.write('f.txt', 'file');
    const snap = await ws.snapshot();
    const target = join(ws.root, 'f.txt');
    const original = fsDefault.lstatSync;
    const originalAsync = fsDefault.promises.lstat;
    // Plays the co-process: the next lstat of the file (the check) is answered, then the file becomes a FIFO.
    let armed = false;
    const swap = (path: unknown) => {
      if (!armed || !String(path).endsWith('/f.txt')) return;
      armed = false;
      fs.unlinkSync(target);
      execFileSync('mkfifo', [target]);
    };
    // The default export is mutable at run time; syncBuiltinESMExports() makes named imports see the change.
    const mutable = fsDefault as { lstatSync: typeof fs.lstatSync };
    mutable.lstatSync = ((path: fs.PathLike, options?: fs.StatSyncOptions) => {
      const result = original(path, options);
      swap(path);
      return result;
    }) as typeof fs.lstatSync;
    fsDefault.promises.lstat = (async (path: fs.PathLike, options?: fs.StatOptions) => {
      const result = await originalAsync(path, options);
      swap(path);
      return result;
    }) as typeof fs.promises.lstat;
    syncBuiltinESMExports();
    try {
      const operations: Array<() => Promise<unknown>> = [
        () => ws.read('f.txt'),
        () => ws.snapshot(),
        () => ws.copy('f.txt', 'g.txt', { overwrite: true }),
      ];
      for (const operation of operations) {
        fs.rmSync(target, { force: true });
        fs.writeFileSync(target, `changed ${Math.random()}`);
        armed = true;
        const outcome = await Promise.race([
          operation().then(
            () => 'done',
            () => 'failed',
          ),
          new Promise((resolve) => setTimeout(() => resolve('blocked'), 2000)),
        ]);
        expect(outcome).not.toBe('blocked');
      }
    } finally {
      mutable.lstatSync = original;
      fsDefault.promises.lstat = originalAsync;
      syncBuiltinESMExports();
      // Unblock anything still waiting on the FIFO.
      try {
        if (fs.lstatSync(target).isFIFO()) fs.closeSync(fs.openSync(target, fs.constants.O_RDWR | fs.constants.O_NONBLOCK));
      } catch {
        // nothing to unblock
      }
    }
    await ws.restore(snap);
    expect((await ws.read('f.txt')).content).toBe('file');
  }, 15_000);
});
