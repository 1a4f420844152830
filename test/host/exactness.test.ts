import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GitStore } from '../../src/backends/host/git/store.js';
import { StatCache, statKey, type LeafNode } from '../../src/backends/host/stat-cache.js';
import { gitEnv, scratch, hostOf } from './support.js';

/** One test per case of "what a snapshot holds": each takes a snapshot, disturbs the case, restores, checks it. */
describe('host snapshots are exact', () => {
  const { workspace, dir } = scratch();

  it('captures files a .gitignore would ignore (.gitignore is ordinary content)', async () => {
    const ws = workspace();
    await ws.write('.gitignore', '*.log\nbuild/\n');
    await ws.write('debug.log', 'log');
    await ws.write('build/out.js', 'out');
    const snap = await ws.snapshot();
    await ws.delete('debug.log');
    await ws.delete('build', { recursive: true });
    await ws.write('.gitignore', '');
    await ws.restore(snap);
    expect((await ws.read('debug.log')).content).toBe('log');
    expect((await ws.read('build/out.js')).content).toBe('out');
    expect(fs.readFileSync(join(ws.root, '.gitignore'), 'utf8')).toBe('*.log\nbuild/\n');
  });

  it('keeps empty directories, and removes ones created since', async () => {
    const ws = workspace();
    await ws.mkdir('empty/nested/deeper');
    await ws.mkdir('other');
    const snap = await ws.snapshot();
    await ws.delete('empty', { recursive: true });
    await ws.mkdir('new-empty');
    await ws.restore(snap);
    expect((await ws.stat('empty/nested/deeper')).isDirectory).toBe(true);
    expect(await ws.list('empty/nested/deeper')).toEqual([]);
    expect(await ws.exists('new-empty')).toBe(false);
    expect((await ws.list('/')).map((e) => e.name)).toEqual(['empty', 'other']);
  });

  it('holds symlinks as links with their exact target text (dangling ones too)', async () => {
    const ws = workspace();
    await ws.write('target.txt', 'target');
    fs.symlinkSync('target.txt', join(ws.root, 'link'));
    fs.symlinkSync('does/not/exist', join(ws.root, 'dangling'));
    const snap = await ws.snapshot();
    fs.unlinkSync(join(ws.root, 'link'));
    fs.writeFileSync(join(ws.root, 'link'), 'a regular file now');
    fs.unlinkSync(join(ws.root, 'dangling'));
    await ws.restore(snap);
    expect(fs.lstatSync(join(ws.root, 'link')).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(join(ws.root, 'link'))).toBe('target.txt');
    expect(fs.readlinkSync(join(ws.root, 'dangling'))).toBe('does/not/exist');
    expect(fs.readFileSync(join(ws.root, 'target.txt'), 'utf8')).toBe('target');
  });

  it('holds the executable bit, both ways', async () => {
    const ws = workspace();
    await ws.write('run.sh', '#!/bin/sh\necho hi\n');
    await ws.write('data.txt', 'data');
    fs.chmodSync(join(ws.root, 'run.sh'), 0o755);
    const snap = await ws.snapshot();
    fs.chmodSync(join(ws.root, 'run.sh'), 0o644);
    fs.chmodSync(join(ws.root, 'data.txt'), 0o755);
    await ws.restore(snap);
    expect(fs.statSync(join(ws.root, 'run.sh')).mode & 0o111).not.toBe(0);
    expect(fs.statSync(join(ws.root, 'data.txt')).mode & 0o111).toBe(0);
  });

  it('keeps bytes exactly: no line-ending conversion, no .gitattributes filters, binary intact', async () => {
    const ws = workspace();
    const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
    await ws.write('.gitattributes', '* text=auto eol=lf\n*.txt filter=lfs diff=lfs merge=lfs\n');
    await ws.write('crlf.txt', 'one\r\ntwo\r\n');
    await ws.write('mixed.txt', 'a\r\nb\nc\r');
    await ws.writeBytes('blob.bin', binary);
    const snap = await ws.snapshot();
    await ws.write('crlf.txt', 'one\ntwo\n');
    await ws.write('mixed.txt', 'x');
    await ws.writeBytes('blob.bin', new Uint8Array([1, 2, 3]));
    await ws.restore(snap);
    expect(fs.readFileSync(join(ws.root, 'crlf.txt'), 'latin1')).toBe('one\r\ntwo\r\n');
    expect(fs.readFileSync(join(ws.root, 'mixed.txt'), 'latin1')).toBe('a\r\nb\nc\r');
    expect(new Uint8Array(fs.readFileSync(join(ws.root, 'blob.bin')))).toEqual(binary);
  });

  it('sees same-size edits made by another process within one timestamp tick of a snapshot', async () => {
    // On a filesystem with a coarse clock, an in-place same-size edit right after a snapshot can leave every
    // stat field equal. This machine's clock may be too fine to make that happen on demand, so the stat
    // cache is handed exactly that situation: the entry's recorded stat data is set to the edited file's.
    const root = dir();
    const store = new GitStore(dir());
    GitStore.initSync(store.gitDir);
    const state = new StatCache(root, store, undefined);
    const file = join(root, 'tick.txt');
    fs.writeFileSync(file, 'v1');
    await state.scan();
    const first = (state.lookup('tick.txt') as LeafNode).oid;
    fs.writeFileSync(file, 'v2');
    (state.lookup('tick.txt') as LeafNode).stat = statKey(fs.lstatSync(file));
    await state.scan();
    const second = state.lookup('tick.txt') as LeafNode;
    expect(second.oid).not.toBe(first);
    expect(second.oid).toBe(GitStore.hash('blob', Buffer.from('v2')));
  });

  it('captures nested repositories with and without commits as ordinary content, and rewinds their commits', async () => {
    // With the protect rule off: by default a restore leaves version-control internals the host made alone
    // (docs/security-model.md); this is about what snapshots can hold.
    const ws = workspace({ protect: [] });
    const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv }).toString().trim();
    const nested = join(ws.root, 'vendor', 'lib');
    fs.mkdirSync(nested, { recursive: true });
    git(nested, 'init', '-q');
    fs.writeFileSync(join(nested, 'a.txt'), 'one');
    git(nested, 'add', 'a.txt');
    git(nested, 'commit', '-q', '-m', 'first');
    const first = git(nested, 'rev-parse', 'HEAD');
    fs.mkdirSync(join(ws.root, 'fresh'));
    git(join(ws.root, 'fresh'), 'init', '-q');
    fs.mkdirSync(join(ws.root, 'UPPER', '.GIT'), { recursive: true });
    fs.writeFileSync(join(ws.root, 'UPPER', '.GIT', 'x'), 'x');
    fs.writeFileSync(join(ws.root, '%percent'), 'escaped name');

    const snap = await ws.snapshot();
    // No gitlink (mode 160000) and no `.git` entry in the stored tree.
    const listing = execFileSync('git', ['--git-dir', hostOf(ws).gitDir, 'ls-tree', '-r', '-t', snap.ref], { env: gitEnv }).toString();
    expect(listing).not.toMatch(/^160000/m);
    expect(listing).not.toMatch(/\t(.*\/)?\.git(\/|$)/im);

    fs.writeFileSync(join(nested, 'a.txt'), 'two');
    git(nested, 'commit', '-q', '-am', 'second');
    fs.rmSync(join(ws.root, 'fresh', '.git'), { recursive: true });
    fs.rmSync(join(ws.root, 'UPPER'), { recursive: true });
    fs.rmSync(join(ws.root, '%percent'));
    await ws.restore(snap);
    expect(await ws.diff(snap)).toEqual([]);
    expect(git(nested, 'rev-parse', 'HEAD')).toBe(first);
    expect(git(nested, 'status', '--porcelain')).toBe('');
    expect(fs.readFileSync(join(nested, 'a.txt'), 'utf8')).toBe('one');
    expect(fs.existsSync(join(ws.root, 'fresh', '.git', 'HEAD'))).toBe(true);
    expect(fs.readFileSync(join(ws.root, 'UPPER', '.GIT', 'x'), 'utf8')).toBe('x');
    expect(fs.readFileSync(join(ws.root, '%percent'), 'utf8')).toBe('escaped name');
  });
});
