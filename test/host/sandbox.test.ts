import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, expectNoHostPath } from '../../src/testing/harness.js';
import { scratch } from './support.js';

/**
 * Sandbox attacks: every one plants something a hostile tool (or model) could, then checks that no
 * operation reads, writes or reveals anything outside the root.
 */
describe('host sandbox', () => {
  const { workspace, dir } = scratch();

  function setup() {
    const outside = dir('sessionfs-outside-');
    fs.writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    fs.mkdirSync(join(outside, 'sub'));
    fs.writeFileSync(join(outside, 'sub', 'inner.txt'), 'inner secret\n');
    const ws = workspace();
    const hostPaths = [ws.root, outside];
    return { ws, outside, hostPaths };
  }

  it('refuses every operation through an escaping file link (absolute target)', async () => {
    const { ws, outside, hostPaths } = setup();
    fs.symlinkSync(join(outside, 'secret.txt'), join(ws.root, 'leak'));
    await expectError(ws.read('leak'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.readBytes('leak'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.stat('leak'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('leak', 'pwned'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('leak', 'pwned', { mode: 'append' }), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await ws.exists('leak')).toBe(false);
    expect(await ws.glob('**')).toEqual([]);
    expect(await ws.grep('secret')).toEqual([]);
    expect(await ws.list()).toEqual([{ name: 'leak', path: 'leak', isFile: false, isDirectory: false, isSymlink: true }]);
    expect(fs.readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });

  it('refuses to create a file through a dangling link that points outside', async () => {
    const { ws, outside, hostPaths } = setup();
    fs.symlinkSync(join(outside, 'created-by-attack.txt'), join(ws.root, 'dangling'));
    await expectError(ws.write('dangling', 'x'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('dangling', 'x', { mode: 'append' }), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(fs.existsSync(join(outside, 'created-by-attack.txt'))).toBe(false);
    // `create` refuses too: something (a link) stands there.
    await expect(ws.write('dangling', 'x', { mode: 'create' })).rejects.toThrow();
    expect(fs.existsSync(join(outside, 'created-by-attack.txt'))).toBe(false);
  });

  it('refuses a directory link that leaves the root, for reads, writes, mkdir, list, walks and copies', async () => {
    const { ws, outside, hostPaths } = setup();
    fs.symlinkSync(outside, join(ws.root, 'dirlink'));
    await expectError(ws.read('dirlink/secret.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('dirlink/new.txt', 'x'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.mkdir('dirlink/newdir'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.list('dirlink'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.copy('dirlink/secret.txt', 'stolen.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.rename('dirlink/secret.txt', 'stolen.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.glob('**', { path: 'dirlink/sub' }), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await ws.glob('**', { dot: true })).toEqual([]);
    expect(await ws.grep('secret', { path: '/' })).toEqual([]);
    expect(fs.readdirSync(outside).sort()).toEqual(['secret.txt', 'sub']);
    // Deleting the link removes the link, never the target.
    await ws.delete('dirlink');
    expect(fs.existsSync(join(ws.root, 'dirlink'))).toBe(false);
    expect(fs.readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });

  it('refuses an intermediate component that is a link leaving the root', async () => {
    const { ws, outside, hostPaths } = setup();
    fs.mkdirSync(join(ws.root, 'a'));
    fs.symlinkSync(outside, join(ws.root, 'a', 'b'));
    await expectError(ws.read('a/b/sub/inner.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('a/b/sub/inner.txt', 'pwned'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.delete('a/b/sub/inner.txt'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.stat('a/b/sub'), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await ws.exists('a/b/sub/inner.txt')).toBe(false);
    expect(fs.readFileSync(join(outside, 'sub', 'inner.txt'), 'utf8')).toBe('inner secret\n');
  });

  it('refuses a relative link that climbs out, even through a chain of links inside the root', async () => {
    const { ws, outside, hostPaths } = setup();
    fs.mkdirSync(join(ws.root, 'deep', 'er'), { recursive: true });
    const climb = `${'../'.repeat(20)}${outside.slice(1)}/secret.txt`;
    fs.symlinkSync(climb, join(ws.root, 'deep', 'er', 'rel'));
    fs.symlinkSync('deep/er/rel', join(ws.root, 'chain'));
    fs.symlinkSync('../..', join(ws.root, 'deep', 'er', 'up')); // the root itself: allowed
    fs.symlinkSync('../../..', join(ws.root, 'deep', 'er', 'above')); // one above the root
    await expectError(ws.read('deep/er/rel'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.read('chain'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write('chain', 'pwned'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.list('deep/er/above'), 'PathEscapeError', 'EACCES', { hostPaths });
    await ws.write('inside.txt', 'inside');
    expect((await ws.read('deep/er/up/inside.txt')).content).toBe('inside');
    expect(fs.readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });

  it('follows links that stay inside the root, and writes land on the target inside', async () => {
    const { ws } = setup();
    await ws.write('real/target.txt', 'one');
    fs.symlinkSync('real/target.txt', join(ws.root, 'alias'));
    fs.symlinkSync(join(ws.root, 'real'), join(ws.root, 'absdir'));
    expect((await ws.read('alias')).content).toBe('one');
    await ws.write('alias', 'two');
    expect(fs.lstatSync(join(ws.root, 'alias')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(join(ws.root, 'real/target.txt'), 'utf8')).toBe('two');
    expect((await ws.read('absdir/target.txt')).content).toBe('two');
    expect((await ws.stat('alias')).isSymlink).toBe(true);
  });

  it('rejects `..` above the root, NUL and backslashes before any I/O; a leading / is the root', async () => {
    const { ws, outside, hostPaths } = setup();
    const relativeOutside = `../${outside.split('/').pop()}/secret.txt`;
    await expectError(ws.read(relativeOutside), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(ws.write(`a/../../x.txt`, 'x'), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await ws.exists('../x')).toBe(false);
    await expectError(ws.write('bad\0name', 'x'), 'InvalidPathError', 'EINVAL', { hostPaths });
    await expectError(ws.read('a\\..\\..\\etc\\passwd'), 'InvalidPathError', 'EINVAL', { hostPaths });
    await ws.write(`/${outside.slice(1)}/secret.txt`, 'contained');
    expect(fs.readFileSync(join(ws.root, outside.slice(1), 'secret.txt'), 'utf8')).toBe('contained');
    expect(fs.readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    await ws.write('/etc/passwd', 'not the real one');
    expect(fs.readFileSync(join(ws.root, 'etc/passwd'), 'utf8')).toBe('not the real one');
  });

  it('never reads outside content when a directory is swapped for an escaping link between check and use', async () => {
    const { ws, outside } = setup();
    fs.writeFileSync(join(outside, 'file.txt'), 'OUTSIDE');
    await ws.write('d/file.txt', 'inside');
    // A separate process flips `d` between the real directory and a link to the outside, as fast as it can.
    const flipper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const [d, real, out] = process.argv.slice(1); const end = Date.now() + 1500;
         while (Date.now() < end) { try { fs.renameSync(d, real); fs.symlinkSync(out, d); fs.unlinkSync(d); fs.renameSync(real, d); } catch {} }`,
        join(ws.root, 'd'),
        join(ws.root, 'd-real'),
        outside,
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => flipper.on('exit', resolve));
    let reads = 0;
    let leaks = 0;
    const end = Date.now() + 1300;
    while (Date.now() < end) {
      const batch = await Promise.allSettled(Array.from({ length: 16 }, () => ws.read('d/file.txt')));
      for (const result of batch) {
        if (result.status === 'fulfilled') {
          reads += 1;
          if (result.value.content !== 'inside') leaks += 1;
        } else {
          expectNoHostPath(result.reason as Error, [ws.root, outside]);
        }
      }
    }
    await exited;
    expect(leaks).toBe(0);
    expect(fs.readFileSync(join(outside, 'file.txt'), 'utf8')).toBe('OUTSIDE');
    expect(reads).toBeGreaterThan(0);
  });

  it('hides temp files of interrupted atomic writes from list, glob, grep and snapshots', async () => {
    const { ws } = setup();
    await ws.write('a.txt', 'needle');
    fs.writeFileSync(join(ws.root, '.sessionfs-tmp-0123456789abcdef'), 'needle half-written');
    expect((await ws.list()).map((e) => e.name)).toEqual(['a.txt']);
    expect((await ws.glob('**', { dot: true })).map((m) => m.path)).toEqual(['a.txt']);
    expect((await ws.grep('needle')).map((m) => m.path)).toEqual(['a.txt']);
    const snap = await ws.snapshot();
    await ws.write('b.txt', 'x');
    expect(await ws.diff(snap)).toEqual([{ path: 'b.txt', status: 'added' }]);
  });

  it('writes atomically: a concurrent reader sees the old bytes or the new, never a torn file', async () => {
    const { ws } = setup();
    const a = 'a'.repeat(1 << 20);
    const b = 'b'.repeat(1 << 20);
    await ws.write('big.txt', a);
    const writes = Array.from({ length: 20 }, (_, i) => ws.write('big.txt', i % 2 === 0 ? b : a));
    const reads = Array.from({ length: 20 }, () => ws.read('big.txt', { limit: -1 }));
    await Promise.all(writes);
    for (const { content } of await Promise.all(reads)) expect(content === a || content === b).toBe(true);
  });

  it('serialises concurrent appends and writes per path: hundreds at once lose nothing', async () => {
    const { ws } = setup();
    await Promise.all(Array.from({ length: 300 }, (_, i) => ws.write('log.txt', `line ${i}\n`, { mode: 'append' })));
    const lines = (await ws.read('log.txt', { limit: -1 })).content.split('\n');
    expect(lines).toHaveLength(300);
    expect(new Set(lines).size).toBe(300);
    await Promise.all(Array.from({ length: 200 }, (_, i) => ws.write(`many/f${i}.txt`, `content ${i}`)));
    expect(await ws.glob('many/*')).toHaveLength(200);
  });

  it('create is exclusive: of many concurrent creates of one path exactly one wins', async () => {
    const { ws } = setup();
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => ws.write('once.txt', `writer ${i}`, { mode: 'create' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as Error).name).toBe('FileExistsError');
    // An external process holding the name is respected too.
    fs.writeFileSync(join(ws.root, 'taken.txt'), 'theirs');
    await expectError(ws.write('taken.txt', 'mine', { mode: 'create' }), 'FileExistsError', 'EEXIST', { hostPaths: [] });
    expect(fs.readFileSync(join(ws.root, 'taken.txt'), 'utf8')).toBe('theirs');
  });
});
