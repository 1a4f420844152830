import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ManagedWorkspace, createWorkspace, overlayDriver } from '../../src/index.js';
import { expectError, tempDirs } from '../../src/testing/harness.js';

/** Every entry of a host directory with its bytes (links as their target text): to prove it never changed. */
async function fingerprint(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const visit = async (rel: string): Promise<void> => {
    const entries = (await fs.readdir(join(dir, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const st = await fs.lstat(join(dir, path));
      hash.update(`${path} ${st.mode} ${st.mtimeMs}\n`);
      if (entry.isSymbolicLink()) hash.update(await fs.readlink(join(dir, path)));
      else if (entry.isDirectory()) await visit(path);
      else hash.update(await fs.readFile(join(dir, path)));
    }
  };
  await visit('');
  return hash.digest('hex');
}

describe('overlay workspace', () => {
  let base: string;
  let lower: string;
  let outside: string;
  const tempDir = tempDirs({ prefix: 'sessionfs-overlay-' });
  const opened: ManagedWorkspace[] = [];
  const open = (options: { exclude?: string[]; include?: string[] } = {}): ManagedWorkspace => {
    const workspace = createWorkspace(overlayDriver({ lower, allowedHostRoots: [lower], ...options }));
    opened.push(workspace);
    return workspace;
  };

  beforeEach(async () => {
    base = tempDir();
    lower = join(base, 'lower');
    outside = join(base, 'outside');
    await fs.mkdir(join(lower, 'src', 'lib'), { recursive: true });
    await fs.mkdir(outside);
    await fs.writeFile(join(outside, 'secret.txt'), 'secret\n');
    await fs.writeFile(join(lower, 'README.md'), '# project\n');
    await fs.writeFile(join(lower, 'src', 'main.ts'), 'export const main = 1;\n');
    await fs.writeFile(join(lower, 'src', 'lib', 'util.ts'), 'export const util = 2;\n');
    await fs.writeFile(join(lower, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await fs.writeFile(join(lower, '.env'), 'TOKEN=hunter2\n');
  });
  afterEach(async () => {
    for (const workspace of opened.splice(0)) await workspace.dispose();
  });

  it('shows the lower directory and keeps every change in memory: the host directory is never written', async () => {
    const before = await fingerprint(lower);
    const ws = open();
    expect((await ws.read('src/main.ts')).content).toBe('export const main = 1;');
    await ws.write('src/main.ts', 'changed\n');
    await ws.write('src/new.ts', 'new\n');
    await ws.write('README.md', 'more\n', { mode: 'append' });
    await ws.delete('src/lib', { recursive: true });
    await ws.rename('run.sh', 'bin/run.sh');
    await ws.mkdir('empty');
    expect((await ws.read('README.md')).content).toBe('# project\nmore');
    expect((await ws.list('src')).map((e) => e.name).sort()).toEqual(['main.ts', 'new.ts']);
    expect(await ws.exists('run.sh')).toBe(false);
    expect((await ws.read('bin/run.sh')).content).toBe('#!/bin/sh\necho hi');
    expect(await fingerprint(lower)).toBe(before);
  });

  it('a deletion hides the lower entry everywhere (whiteout); a directory made again where one was deleted starts empty', async () => {
    const ws = open();
    await ws.delete('src/main.ts');
    await expectError(ws.read('src/main.ts'), 'FileNotFoundError', 'ENOENT');
    expect((await ws.glob('**/*.ts')).map((m) => m.path)).toEqual(['src/lib/util.ts']);
    expect((await ws.grep('export')).map((m) => m.path)).toEqual(['src/lib/util.ts']);
    await ws.delete('src', { recursive: true });
    await ws.mkdir('src');
    expect(await ws.list('src')).toEqual([]);
    await ws.write('src/lib/util.ts', 'mine');
    expect((await ws.list('src/lib')).map((e) => e.name)).toEqual(['util.ts']);
    expect((await ws.read('src/lib/util.ts')).content).toBe('mine');
  });

  it('snapshots, diff, restore and patch see lower and upper as one tree', async () => {
    const ws = open();
    const start = await ws.snapshot();
    await ws.write('src/main.ts', 'changed\n');
    await ws.delete('src/lib', { recursive: true });
    await ws.write('added.txt', 'added\n');
    await ws.write('README.md', '# project\n'); // the same bytes: no change
    expect(await ws.diff(start)).toEqual([
      { path: 'added.txt', status: 'added' },
      { path: 'src/lib/util.ts', status: 'deleted' },
      { path: 'src/main.ts', status: 'modified' },
    ]);
    const patch = await ws.patch(start);
    expect(patch).toContain('+changed');
    expect(patch).toContain('deleted file mode');
    const changed = await ws.snapshot();
    await ws.restore(start);
    expect((await ws.read('src/lib/util.ts')).content).toBe('export const util = 2;');
    expect(await ws.exists('added.txt')).toBe(false);
    expect(await ws.diff(start)).toEqual([]);
    expect((await ws.diff(start, changed)).map((d) => d.path)).toEqual(['added.txt', 'src/lib/util.ts', 'src/main.ts']);
    const tree = await ws.snapshotTree(start);
    expect(await tree.entry('run.sh')).toMatchObject({ kind: 'file', executable: true });
  });

  it('an overwritten lower file keeps its exec bit', async () => {
    const ws = open();
    await ws.write('run.sh', '#!/bin/sh\necho bye\n');
    expect(await (await ws.snapshotTree()).entry('run.sh')).toMatchObject({ kind: 'file', executable: true });
  });

  it('a lower file changed on disk after the session read it raises ConflictError, never a mix of versions', async () => {
    const ws = open();
    expect((await ws.read('src/main.ts')).content).toBe('export const main = 1;');
    await fs.writeFile(join(lower, 'src', 'main.ts'), 'export const main = 999; // someone else\n');
    await expectError(ws.read('src/main.ts'), 'ConflictError', 'ECONFLICT');
    await expectError(ws.stat('src/main.ts'), 'ConflictError', 'ECONFLICT');
    // grep never reads the new bytes of a file the session has seen.
    const grep = ws.grep('999').then((matches) => matches.map((m) => m.path));
    await grep.then(
      (paths) => expect(paths).not.toContain('src/main.ts'),
      (error: Error & { code?: string }) => expect(error.code).toBe('ECONFLICT'),
    );
    // A file the session had not read yet is read as it is now.
    await fs.writeFile(join(lower, 'src', 'lib', 'util.ts'), 'fresh\n');
    expect((await ws.read('src/lib/util.ts')).content).toBe('fresh');
    // Overwriting the changed file is allowed: the session's version replaces it in the upper layer.
    await ws.write('src/main.ts', 'mine\n');
    expect((await ws.read('src/main.ts')).content).toBe('mine');
  });

  it('grep through untouched lower directories reads the disk; an upper file in one is what grep sees', async () => {
    const ws = open();
    await ws.write('src/lib/util.ts', 'replaced in the upper layer\n');
    expect((await ws.grep('export const')).map((m) => m.path)).toEqual(['src/main.ts']);
    expect((await ws.grep('replaced')).map((m) => m.path)).toEqual(['src/lib/util.ts']);
    await ws.delete('src/main.ts');
    expect((await ws.grep('export const')).map((m) => m.path)).toEqual([]);
  });

  it('exclude hides lower paths from every operation; include admits only matching files', async () => {
    const ws = open({ exclude: ['.env', 'src/lib'] });
    await expectError(ws.read('.env'), 'FileNotFoundError', 'ENOENT');
    await expectError(ws.read('src/lib/util.ts'), 'FileNotFoundError', 'ENOENT');
    expect((await ws.list('/')).map((e) => e.name).sort()).toEqual(['README.md', 'run.sh', 'src']);
    expect((await ws.glob('**', { dot: true })).map((m) => m.path)).toEqual(['README.md', 'run.sh', 'src/main.ts']);
    expect(await ws.grep('hunter2')).toEqual([]);
    // Writing an excluded path makes a new file; the hidden one never shows through.
    await ws.write('src/lib/other.ts', 'x');
    expect((await ws.list('src/lib')).map((e) => e.name)).toEqual(['other.ts']);
    const only = open({ include: ['**/*.ts'] });
    expect((await only.glob('**', { dot: true })).map((m) => m.path)).toEqual(['src/lib/util.ts', 'src/main.ts']);
  });

  it('links inside the lower directory are followed; links that leave it are walls', async () => {
    await fs.symlink('src/main.ts', join(lower, 'alias.ts'));
    await fs.symlink(join(outside, 'secret.txt'), join(lower, 'abs-out'));
    await fs.symlink('../outside', join(lower, 'rel-out'));
    const ws = open();
    expect((await ws.read('alias.ts')).content).toBe('export const main = 1;');
    await expectError(ws.read('abs-out'), 'PathEscapeError', 'EACCES');
    await expectError(ws.read('rel-out/secret.txt'), 'PathEscapeError', 'EACCES');
    await expectError(ws.write('rel-out/new.txt', 'x'), 'PathEscapeError', 'EACCES');
    expect(await ws.grep('secret')).toEqual([]);
    await ws.rename('abs-out', 'moved');
    expect((await ws.stat('moved').catch((error: Error) => error)) as Error).toMatchObject({ code: 'EACCES' });
    expect(await fs.readdir(outside)).toEqual(['secret.txt']);
  });

  it('a link in the upper layer keeps resolving in the merged tree', async () => {
    await fs.symlink('src', join(lower, 'code'));
    const ws = open();
    await ws.write('src/main.ts', 'upper\n');
    expect((await ws.read('code/main.ts')).content).toBe('upper');
    await ws.write('code/through.ts', 'via link\n');
    expect((await ws.read('src/through.ts')).content).toBe('via link');
    await ws.copy('code', 'code2');
    expect((await ws.stat('code2')).isSymlink).toBe(true);
    expect((await ws.read('code2/through.ts')).content).toBe('via link');
  });

  it('refuses a lower directory outside allowedHostRoots, a missing one and a file', () => {
    expect(() => createWorkspace(overlayDriver({ lower: outside, allowedHostRoots: [lower] }))).toThrow(
      expect.objectContaining({ code: 'EACCES' }),
    );
    expect(() => createWorkspace(overlayDriver({ lower, allowedHostRoots: [] }))).toThrow(expect.objectContaining({ code: 'EACCES' }));
    expect(() => createWorkspace(overlayDriver({ lower: join(lower, 'nope'), allowedHostRoots: [lower] }))).toThrow(
      expect.objectContaining({ code: 'EINVAL' }),
    );
    expect(() => createWorkspace(overlayDriver({ lower: join(lower, 'README.md'), allowedHostRoots: [lower] }))).toThrow(
      expect.objectContaining({ code: 'EINVAL' }),
    );
  });

  it('a rename of a lower directory moves what it shows, and a restore brings the lower one back', async () => {
    const ws = open();
    const start = await ws.snapshot();
    await ws.rename('src', 'moved');
    expect(await ws.exists('src')).toBe(false);
    expect((await ws.read('moved/lib/util.ts')).content).toBe('export const util = 2;');
    await ws.restore(start);
    expect((await ws.read('src/lib/util.ts')).content).toBe('export const util = 2;');
    expect(await ws.exists('moved')).toBe(false);
  });
});
