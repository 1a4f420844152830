import { describe, expect, it } from 'vitest';
import type { PolicyOperation } from '../../src/governance/policy.js';
import { contentsOf, expectError } from '../../src/testing/harness.js';
import { SHARED_FILE_BACKENDS, disposing } from '../support/backends.js';

describe.each(SHARED_FILE_BACKENDS)('policy on $name', (backend) => {
  const { create, pair } = disposing(backend);

  describe('deny and allow', () => {
    it('hides denied paths from list, glob and grep, and refuses any direct access', async () => {
      const workspace = create({ policy: { deny: ['**/.env', 'secrets'] } });
      await workspace.write('src/app.ts', 'const token = process.env.TOKEN;\n');
      await expectError(workspace.write('.env', 'TOKEN=1\n'), 'PolicyError', 'EPERM');
      await expectError(workspace.write('secrets/key.txt', 'TOKEN\n'), 'PolicyError', 'EPERM');
      await expectError(workspace.mkdir('secrets'), 'PolicyError', 'EPERM');
      expect(await contentsOf(workspace)).toStrictEqual({ 'src/': '', 'src/app.ts': 'const token = process.env.TOKEN;\n' });
    });

    it('filters what already exists and refuses every operation on it', async () => {
      const { open, governed: workspace } = pair({ policy: { deny: ['**/.env', 'secrets'] } });
      await open.write('.env', 'TOKEN=1\n');
      await open.write('config/.ENV', 'TOKEN=2\n');
      await open.write('secrets/key.txt', 'TOKEN=3\n');
      await open.write('src/app.ts', 'TOKEN\n');

      expect((await workspace.list('/')).map((e) => e.name)).toEqual(['config', 'src']);
      expect(await workspace.list('config')).toEqual([]);
      expect((await workspace.glob('**/*', { dot: true })).map((m) => m.path)).toEqual(['src/app.ts']);
      expect((await workspace.grep('TOKEN', { glob: '**' })).map((m) => m.path)).toEqual(['src/app.ts']);
      for (const denied of ['.env', './config/.ENV', 'secrets', 'secrets/key.txt', 'src/../secrets/key.txt']) {
        await expectError(workspace.read(denied), 'PolicyError', 'EPERM');
        await expectError(workspace.readBytes(denied), 'PolicyError', 'EPERM');
        await expectError(workspace.stat(denied), 'PolicyError', 'EPERM');
        await expectError(workspace.exists(denied), 'PolicyError', 'EPERM');
        await expectError(workspace.delete(denied, { recursive: true }), 'PolicyError', 'EPERM');
        await expectError(workspace.rename(denied, 'moved'), 'PolicyError', 'EPERM');
        await expectError(workspace.copy(denied, 'copied', { recursive: true }), 'PolicyError', 'EPERM');
        await expectError(workspace.copy('src/app.ts', denied, { overwrite: true }), 'PolicyError', 'EPERM');
      }
      await expectError(workspace.list('secrets'), 'PolicyError', 'EPERM');
      await expectError(workspace.grep('TOKEN', { path: 'secrets' }), 'PolicyError', 'EPERM');
      await expectError(workspace.glob('*', { path: 'secrets' }), 'PolicyError', 'EPERM');
      expect(await open.read('secrets/key.txt')).toMatchObject({ content: 'TOKEN=3' });
    });

    // The kv backend's content-addressed snapshots only see writes made through their own workspace.
    it.runIf(!backend.name.endsWith('(third-party driver)'))('keeps denied paths out of diff and patch', async () => {
      const { open, governed: workspace } = pair({ policy: { deny: ['**/.env'] } });
      const before = await workspace.snapshot();
      const openBefore = await open.snapshot();
      await open.write('.env', 'TOKEN=hunter2\n');
      await open.write('app/.env', 'TOKEN=hunter3\n');
      await open.write('app/main.ts', 'main\n');
      expect(await workspace.diff(before)).toEqual([{ path: 'app/main.ts', status: 'added' }]);
      const patch = await workspace.patch(before);
      expect(patch).toContain('app/main.ts');
      expect(patch).not.toContain('hunter');
      expect(await open.patch(openBefore)).toContain('hunter2');
    });

    it('admits only what allow matches, and the directories on the way to it', async () => {
      const workspace = create({ policy: { allow: ['src/**/*.ts', 'README.md', 'docs'] } });
      await workspace.write('src/lib/a.ts', 'a\n');
      await workspace.write('README.md', 'r\n');
      await workspace.write('docs/guide/x.txt', 'x\n');
      await expectError(workspace.write('src/lib/a.js', 'a\n'), 'PolicyError', 'EPERM');
      await expectError(workspace.write('package.json', '{}'), 'PolicyError', 'EPERM');
      await expectError(workspace.mkdir('build'), 'PolicyError', 'EPERM');
      expect((await workspace.list('/')).map((e) => e.name)).toEqual(['README.md', 'docs', 'src']);
      expect((await workspace.glob('**/*')).map((m) => m.path)).toEqual(['README.md', 'docs/guide/x.txt', 'src/lib/a.ts']);
      // `src` itself matches no pattern but leads to allowed files; as a file it would not be admitted.
      expect((await workspace.stat('src')).isDirectory).toBe(true);
      await expectError(workspace.write('src', 'not a dir'), 'PolicyError', 'EPERM');
    });

    it('judges a missing path that could be a directory on the way to allowed files without the driver stat-ing it', async () => {
      const workspace = create({ policy: { allow: ['src/**/*.ts'] } });
      await workspace.write('src/a.ts', 'a\n');
      // Only a directory would be admitted there; nothing is, so it is denied (the strict backend checks the driver was not asked).
      await expectError(workspace.stat('src/missing'), 'PolicyError', 'EPERM');
      await expectError(workspace.glob('**/*.ts', { path: 'src/missing' }), 'PolicyError', 'EPERM');
    });

    it('lets deny win over allow', async () => {
      const workspace = create({ policy: { allow: ['src'], deny: ['src/generated'] } });
      await workspace.write('src/a.ts', 'a');
      await expectError(workspace.write('src/generated/b.ts', 'b'), 'PolicyError', 'EPERM');
      expect((await workspace.glob('**')).map((m) => m.path)).toEqual(['src/a.ts']);
    });

    it('blocks extensions, in any case, as if denied', async () => {
      const workspace = create({ policy: { blockedExtensions: ['.pem', 'EXE'] } });
      await expectError(workspace.write('keys/server.PEM', 'k'), 'PolicyError', 'EPERM');
      await expectError(workspace.write('bin/tool.exe', 'k'), 'PolicyError', 'EPERM');
      await workspace.write('notes.pem.txt', 'fine');
      await workspace.write('pem', 'fine');
      expect((await workspace.glob('*')).map((m) => m.path)).toEqual(['notes.pem.txt', 'pem']);
    });

    it('refuses a recursive delete, rename or copy of a directory holding denied paths, changing nothing', async () => {
      const { open, governed: workspace } = pair({ policy: { deny: ['**/.env'] } });
      await open.write('app/.env', 'TOKEN=1\n');
      await open.write('app/main.ts', 'main\n');
      const before = await contentsOf(open);
      await expectError(workspace.delete('app', { recursive: true }), 'PolicyError', 'EPERM');
      await expectError(workspace.rename('app', 'moved'), 'PolicyError', 'EPERM');
      await expectError(workspace.copy('app', 'copied', { recursive: true }), 'PolicyError', 'EPERM');
      expect(await contentsOf(open)).toEqual(before);
    });

    it.runIf(backend.symlink !== undefined)('judges what a link really reaches, not its name', async () => {
      const { open, governed: workspace } = pair({ policy: { deny: ['secrets'] } });
      await open.write('secrets/key.txt', 'K\n');
      await open.write('public/readme.txt', 'R\n');
      await backend.symlink?.(workspace, 'innocent.txt', 'secrets/key.txt');
      await backend.symlink?.(workspace, 'door', 'secrets');
      await expectError(workspace.read('innocent.txt'), 'PolicyError', 'EPERM');
      await expectError(workspace.read('door/key.txt'), 'PolicyError', 'EPERM');
      await expectError(workspace.write('door/new.txt', 'x'), 'PolicyError', 'EPERM');
      // A link to a denied file not there yet (a write would create it), and a link to such a link.
      await backend.symlink?.(workspace, 'dangling.txt', 'secrets/later.txt');
      await backend.symlink?.(workspace, 'chain.txt', 'innocent.txt');
      await expectError(workspace.write('dangling.txt', 'x'), 'PolicyError', 'EPERM');
      await expectError(workspace.read('chain.txt'), 'PolicyError', 'EPERM');
      expect(await open.exists('secrets/later.txt')).toBe(false);
      expect((await workspace.list('/')).map((e) => e.name)).toEqual(['public']);
      expect((await workspace.grep('K|R')).map((m) => m.path)).toEqual(['public/readme.txt']);
    });
  });

  describe('sizes, counts and quotas', () => {
    it('limits the size a write or append leaves behind', async () => {
      const workspace = create({ policy: { maxFileBytes: 8 } });
      await workspace.write('a.txt', '12345678');
      await expectError(workspace.write('b.txt', '123456789'), 'LimitExceededError', 'EFBIG');
      await expectError(workspace.write('a.txt', '9', { mode: 'append' }), 'LimitExceededError', 'EFBIG');
      expect(await contentsOf(workspace)).toEqual({ 'a.txt': '12345678' });
    });

    it('limits the files a recursive delete, rename or copy touches; over the limit nothing changes', async () => {
      const workspace = create({ policy: { maxFilesPerOperation: 2 } });
      for (const name of ['a', 'b', 'c']) await workspace.write(`big/${name}.txt`, name);
      await workspace.write('small/a.txt', 'a');
      const before = await contentsOf(workspace);
      await expectError(workspace.delete('big', { recursive: true }), 'LimitExceededError', 'EFBIG');
      await expectError(workspace.copy('big', 'big2', { recursive: true }), 'LimitExceededError', 'EFBIG');
      await expectError(workspace.rename('big', 'big3'), 'LimitExceededError', 'EFBIG');
      expect(await contentsOf(workspace)).toEqual(before);
      await workspace.copy('small', 'small2', { recursive: true });
      await workspace.delete('small', { recursive: true });
      expect(await workspace.exists('small2/a.txt')).toBe(true);
    });

    it('refuses a copy that would leave a file over maxFileBytes', async () => {
      const { open, governed: workspace } = pair({ policy: { maxFileBytes: 5 } });
      await open.write('dir/big.txt', '0123456789');
      await expectError(workspace.copy('dir', 'dir2', { recursive: true }), 'LimitExceededError', 'EFBIG');
      await workspace.rename('dir', 'dir3');
      expect(await workspace.exists('dir2')).toBe(false);
    });

    it('keeps a byte quota across writes, overwrites, deletes and copies', async () => {
      const workspace = create({ policy: { quotaBytes: 10 } });
      await workspace.write('a.txt', '12345');
      await workspace.write('b.txt', '12345');
      await expectError(workspace.write('c.txt', '1'), 'QuotaExceededError', 'EDQUOT');
      await expectError(workspace.write('a.txt', '!', { mode: 'append' }), 'QuotaExceededError', 'EDQUOT');
      await expectError(workspace.copy('a.txt', 'c.txt'), 'QuotaExceededError', 'EDQUOT');
      await workspace.write('a.txt', '123'); // shrinking is always fine
      await workspace.write('c.txt', '12');
      await workspace.delete('b.txt');
      await workspace.copy('a.txt', 'd.txt');
      await workspace.rename('d.txt', 'c.txt', { overwrite: true });
      expect(await contentsOf(workspace)).toEqual({ 'a.txt': '123', 'c.txt': '123' });
      await workspace.write('e.txt', '1234');
      await expectError(workspace.write('f.txt', '1'), 'QuotaExceededError', 'EDQUOT');
    });

    it('keeps a file quota, counts what existed before, and measures again after a restore', async () => {
      const { open, governed: workspace } = pair({ policy: { quotaFiles: 3 } });
      await open.write('one.txt', '1');
      await open.write('dir/two.txt', '2');
      const two = await workspace.snapshot();
      await workspace.write('three.txt', '3');
      await expectError(workspace.write('four.txt', '4'), 'QuotaExceededError', 'EDQUOT');
      await expectError(workspace.copy('dir', 'dir2', { recursive: true }), 'QuotaExceededError', 'EDQUOT');
      await workspace.restore(two);
      await workspace.write('three.txt', '3');
      await workspace.delete('dir', { recursive: true });
      await workspace.write('four.txt', '4');
      expect(Object.keys(await contentsOf(workspace)).sort()).toEqual(['four.txt', 'one.txt', 'three.txt']);
    });

    it('gives back what a failed operation reserved', async () => {
      const workspace = create({ policy: { quotaFiles: 2 } });
      await workspace.write('file', 'x');
      await expectError(workspace.write('file/child.txt', 'x'), 'NotADirectoryError', 'ENOTDIR');
      await workspace.write('other.txt', 'x');
    });
  });

  describe('confirm', () => {
    it('is asked before deleting and replacing, never for creating, with what is about to happen', async () => {
      const asked: PolicyOperation[] = [];
      const workspace = create({ policy: { confirm: (op) => (asked.push(op), true) } });
      await workspace.write('a.txt', 'a');
      await workspace.write('a.txt', 'b', { mode: 'append' });
      await workspace.copy('a.txt', 'b.txt');
      await workspace.rename('b.txt', 'c.txt');
      await workspace.mkdir('dir');
      expect(asked).toEqual([]);
      await workspace.write('a.txt', 'new');
      await workspace.copy('a.txt', 'c.txt', { overwrite: true });
      await workspace.rename('c.txt', 'a.txt', { overwrite: true });
      await workspace.delete('a.txt');
      await workspace.delete('dir');
      expect(asked).toEqual([
        { op: 'overwrite', path: 'a.txt' },
        { op: 'copy', path: 'a.txt', to: 'c.txt' },
        { op: 'rename', path: 'c.txt', to: 'a.txt' },
        { op: 'delete', path: 'a.txt' },
        { op: 'delete', path: 'dir' },
      ]);
    });

    it('denies on false, on a throw and on anything but true, changing nothing', async () => {
      for (const confirm of [
        () => false,
        () => Promise.resolve(false),
        () => {
          throw new Error('no');
        },
        () => Promise.reject(new Error('no')),
        () => 'yes' as unknown as boolean,
      ]) {
        const { open, governed: workspace } = pair({ policy: { confirm } });
        await open.write('a.txt', 'a');
        await open.write('b.txt', 'b');
        await expectError(workspace.write('a.txt', 'changed'), 'PolicyError', 'EPERM');
        await expectError(workspace.delete('a.txt'), 'PolicyError', 'EPERM');
        await expectError(workspace.copy('a.txt', 'b.txt', { overwrite: true }), 'PolicyError', 'EPERM');
        await expectError(workspace.rename('a.txt', 'b.txt', { overwrite: true }), 'PolicyError', 'EPERM');
        expect(await contentsOf(workspace)).toEqual({ 'a.txt': 'a', 'b.txt': 'b' });
        await workspace.write('c.txt', 'new files need no confirmation');
      }
    });
  });

  it('exposes the policy it enforces, frozen', async () => {
    const workspace = create({ policy: { deny: ['x'] } });
    expect(workspace.policy).toEqual({ deny: ['x'] });
    expect(Object.isFrozen(workspace.policy)).toBe(true);
    expect(create().policy).toBeUndefined();
  });
});

describe('malformed policies', () => {
  const cases: [string, unknown, RegExp][] = [
    ['not an object', 'deny everything', /policy must be an object/],
    ['an unknown option', { denny: ['.env'] }, /policy\.denny is not a policy option/],
    ['a glob list that is a string', { deny: '.env' }, /policy\.deny must be a list of non-empty strings/],
    ['an empty glob', { allow: [''] }, /policy\.allow must be a list/],
    ['a negated glob', { deny: ['!src'] }, /no negated globs/],
    ['a negative size', { maxFileBytes: -1 }, /policy\.maxFileBytes must be a non-negative whole number/],
    ['a fractional quota', { quotaFiles: 1.5 }, /policy\.quotaFiles/],
    ['a confirm that is not a function', { confirm: true }, /policy\.confirm must be a function/],
  ];
  it.each(SHARED_FILE_BACKENDS)('are refused when $name is constructed', (backend) => {
    for (const [, policy, message] of cases) {
      expect(() => backend.open({ policy: policy as never })).toThrowError(message);
    }
  });
});
