import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { drain } from '../../src/testing/streams.js';
import { expectError } from '../../src/testing/harness.js';
import { scratch } from './support.js';

const hiddenTemps = (dir: string): string[] => fs.readdirSync(dir).filter((name) => name.startsWith('.sessionfs-tmp-'));
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('host streams', () => {
  const { workspace, dir } = scratch();

  it('stages in one hidden temp file in the root, gone after a commit, an abort, an error or dispose', async () => {
    const ws = workspace();
    const writer = (await ws.createWriteStream('out/data.bin')).getWriter();
    await writer.write(bytes('staged'));
    expect(hiddenTemps(ws.root)).toHaveLength(1);
    expect((await ws.list('/')).map((entry) => entry.name)).toEqual([]);
    await writer.close();
    expect(hiddenTemps(ws.root)).toEqual([]);
    expect(fs.readFileSync(join(ws.root, 'out/data.bin'), 'utf8')).toBe('staged');
    const aborted = (await ws.createWriteStream('x.bin')).getWriter();
    await aborted.write(bytes('x'));
    await aborted.abort();
    const refused = (await ws.createWriteStream('y.bin', { mode: 'create' })).getWriter();
    fs.writeFileSync(join(ws.root, 'y.bin'), 'theirs');
    await expectError(refused.close(), 'FileExistsError', 'EEXIST', { hostPaths: [] });
    expect(fs.readFileSync(join(ws.root, 'y.bin'), 'utf8')).toBe('theirs');
    const left = (await ws.createWriteStream('left.bin')).getWriter();
    await left.write(bytes('never closed'));
    expect(hiddenTemps(ws.root)).toHaveLength(1);
    const root = dir();
    const persistent = workspace({ root });
    await (await persistent.createWriteStream('abandoned.bin')).getWriter().write(bytes('x'));
    await persistent.dispose();
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('keeps the permission bits of the file it replaces, and appends without losing what was there', async () => {
    const ws = workspace();
    fs.writeFileSync(join(ws.root, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const writer = (await ws.createWriteStream('run.sh', { mode: 'append' })).getWriter();
    await writer.write(bytes('echo hi\n'));
    await writer.close();
    expect(fs.readFileSync(join(ws.root, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    expect(fs.statSync(join(ws.root, 'run.sh')).mode & 0o777).toBe(0o755);
  });

  it('never writes or reads through a link that leaves the root; a link inside the root is followed', async () => {
    const outside = dir();
    fs.writeFileSync(join(outside, 'secret.txt'), 'secret');
    const ws = workspace();
    fs.symlinkSync(join(outside, 'secret.txt'), join(ws.root, 'escape.txt'));
    fs.symlinkSync(outside, join(ws.root, 'escape-dir'));
    await expectError(ws.createReadStream('escape.txt'), 'PathEscapeError', 'EACCES', { hostPaths: [outside] });
    await expectError(ws.createWriteStream('escape.txt'), 'PathEscapeError', 'EACCES', { hostPaths: [outside] });
    await expectError(ws.createWriteStream('escape-dir/new.txt'), 'PathEscapeError', 'EACCES', { hostPaths: [outside] });
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    expect(fs.readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    await ws.write('real.txt', 'inside');
    fs.symlinkSync('real.txt', join(ws.root, 'link.txt'));
    const writer = (await ws.createWriteStream('link.txt')).getWriter();
    await writer.write(bytes('through the link'));
    await writer.close();
    expect(fs.readFileSync(join(ws.root, 'real.txt'), 'utf8')).toBe('through the link');
    expect(fs.lstatSync(join(ws.root, 'link.txt')).isSymbolicLink()).toBe(true);
  });

  it('a read stream keeps reading the file it opened when the path is replaced meanwhile', async () => {
    const ws = workspace();
    const data = new Uint8Array(3 * 1024 * 1024).fill(7);
    await ws.writeBytes('big.bin', data);
    const stream = await ws.createReadStream('big.bin');
    await ws.write('big.bin', 'replaced');
    const read = await drain(stream);
    expect(read.byteLength).toBe(data.byteLength);
    expect(read.every((byte) => byte === 7)).toBe(true);
  });
});
