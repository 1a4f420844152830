import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, mkdirSync, statSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostSourceSchema, hydrate, type HydrateProgress } from '../../src/sources/index.js';
import { contentsOf, expectNoHostPath } from '../../src/testing/harness.js';
import { kindsOf } from '../../src/testing/file-kinds.js';
import { SESSION_BACKENDS, backendNamed, caught, hostTrees, workspaceFactory } from '../support/backends.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

/** Hydrates `project` into `workspace` and stops it (a throwing progress listener) at its last file, `z.txt`. */
async function stoppedAtLastFile(workspace: SnapshotableWorkspace, project: string, allowed: string): Promise<void> {
  const error = await caught(() =>
    hydrate(workspace, [{ hostPath: project }], {
      allowedHostRoots: [allowed],
      onProgress: (progress) => {
        if (progress.path === 'project/z.txt') throw new Error('stop');
      },
    }),
  );
  expect(error.message).toBe('stop');
}

describe.each(SESSION_BACKENDS)('hydrate on $name', (backend) => {
  const create = workspaceFactory(backend);
  const host = hostTrees();

  /** An allowed root holding `project/` and, next to it, a forbidden `secret/` outside the allowed root. */
  function layout(project: Parameters<typeof host.tree>[0] = { 'a.txt': 'a' }) {
    const base = host.dir();
    host.tree({ 'secret/key.pem': 'TOP SECRET', 'secret/dir/key.pem': 'SECRET key', 'secret/dir/inner.txt': 'inner secret' }, base);
    const allowed = join(base, 'allowed');
    mkdirSync(allowed);
    host.tree(project, join(allowed, 'project'));
    return { base, allowed, project: join(allowed, 'project'), secret: join(base, 'secret') };
  }

  describe('allow-list', () => {
    it('refuses without allowed roots, before touching anything', async () => {
      const { project } = layout();
      const workspace = await create();
      for (const allowedHostRoots of [undefined, []]) {
        const error = await caught(() => hydrate(workspace, [{ hostPath: project }], { allowedHostRoots } as never));
        expect(error).toMatchObject({ name: 'PathEscapeError', code: 'EACCES' });
      }
      expect(await workspace.list('/')).toEqual([]);
    });

    it('refuses a host path outside every allowed root, naming no host path', async () => {
      const { allowed, secret, base } = layout();
      const workspace = await create();
      const error = await caught(() => hydrate(workspace, [{ hostPath: secret }], { allowedHostRoots: [allowed] }));
      expect(error).toMatchObject({ name: 'PathEscapeError', code: 'EACCES', path: 'secret' });
      expectNoHostPath(error, [base]);
      expect(await workspace.list('/')).toEqual([]);
    });

    it('resolves `..` before checking: allowed/project/../../secret escapes', async () => {
      const { allowed, project, base } = layout();
      const workspace = await create();
      const error = await caught(() =>
        hydrate(workspace, [{ hostPath: `${project}/../../secret`, path: 'x' }], { allowedHostRoots: [allowed] }),
      );
      expect(error).toMatchObject({ name: 'PathEscapeError', code: 'EACCES' });
      expectNoHostPath(error, [base]);
      // The same `..` staying inside is fine.
      await hydrate(workspace, [{ hostPath: `${project}/../project`, path: 'ok' }], { allowedHostRoots: [allowed] });
      expect(await contentsOf(workspace)).toEqual({ 'ok/': '', 'ok/a.txt': 'a' });
    });

    it('resolves `..` physically: through a directory link, `..` lands next to the link target', async () => {
      const { allowed, base } = layout();
      // allowed/jump -> base/secret/dir; allowed/jump/.. is base/secret, outside.
      symlinkSync(join(base, 'secret', 'dir'), join(allowed, 'jump'));
      const workspace = await create();
      const error = await caught(() =>
        hydrate(workspace, [{ hostPath: `${allowed}/jump/..`, path: 'x', followSymlinks: true }], { allowedHostRoots: [allowed] }),
      );
      expect(error).toMatchObject({ name: 'PathEscapeError' });
      expect(await workspace.list('/')).toEqual([]);
    });

    it('a host path that is itself a link: skipped unless followed, and followed only inside the allowed roots', async () => {
      const { allowed, project, secret } = layout({ 'a.txt': 'a' });
      symlinkSync(secret, join(allowed, 'out'));
      symlinkSync(project, join(allowed, 'in'));
      const workspace = await create();

      const notFollowed = await hydrate(workspace, [{ hostPath: join(allowed, 'in') }], { allowedHostRoots: [allowed] });
      expect(notFollowed.files).toBe(0);
      expect(notFollowed.skipped).toEqual([{ path: 'in', reason: expect.stringContaining('symlink') }]);
      expect(await workspace.list('/')).toEqual([]);

      const escape = await caught(() =>
        hydrate(workspace, [{ hostPath: join(allowed, 'out'), followSymlinks: true }], { allowedHostRoots: [allowed] }),
      );
      expect(escape).toMatchObject({ name: 'PathEscapeError', path: 'out' });
      expect(await workspace.list('/')).toEqual([]);

      // Followed inside the roots; the path is the base name as given (the link's), not the target's.
      const followed = await hydrate(workspace, [{ hostPath: join(allowed, 'in'), followSymlinks: true }], { allowedHostRoots: [allowed] });
      expect(followed.files).toBe(1);
      expect(await contentsOf(workspace)).toEqual({ 'in/': '', 'in/a.txt': 'a' });
    });

    it('an allowed root given through a link is resolved, and anything inside its real path is allowed', async () => {
      const { allowed, base } = layout();
      symlinkSync(allowed, join(base, 'allowed-link'));
      const workspace = await create();
      await hydrate(workspace, [{ hostPath: join(allowed, 'project') }], { allowedHostRoots: [join(base, 'allowed-link')] });
      expect(await contentsOf(workspace)).toEqual({ 'project/': '', 'project/a.txt': 'a' });
    });

    it('an allowed root does not allow its sibling with a common prefix', async () => {
      const base = host.dir();
      host.tree({ 'root/a': 'a', 'root2/b': 'b' }, base);
      const workspace = await create();
      await expect(
        hydrate(workspace, [{ hostPath: join(base, 'root2') }], { allowedHostRoots: [join(base, 'root')] }),
      ).rejects.toMatchObject({ code: 'EACCES' });
    });

    it('a missing host path is ENOENT without the host path', async () => {
      const { allowed, base } = layout();
      const workspace = await create();
      const error = await caught(() => hydrate(workspace, [{ hostPath: join(allowed, 'nope') }], { allowedHostRoots: [allowed] }));
      expect(error).toMatchObject({ name: 'FileNotFoundError', code: 'ENOENT', path: 'nope' });
      expectNoHostPath(error, [base]);
    });
  });

  describe('symlinks inside the tree', () => {
    function linkedTree() {
      const paths = layout({ 'real.txt': 'real', 'sub/file.txt': 'sub' });
      const { project, secret, allowed } = paths;
      symlinkSync(join(secret, 'key.pem'), join(project, 'abs-out-file'));
      symlinkSync(secret, join(project, 'abs-out-dir'));
      symlinkSync('../../secret/key.pem', join(project, 'rel-out-file'));
      symlinkSync('../../secret', join(project, 'rel-out-dir'));
      symlinkSync('real.txt', join(project, 'in-file'));
      symlinkSync('sub', join(project, 'in-dir'));
      symlinkSync('missing', join(project, 'broken'));
      symlinkSync('..', join(project, 'sub', 'loop'));
      // Inside the allowed root but outside the source: allowed (the rule is the allowed roots).
      writeFileSync(join(allowed, 'neighbour.txt'), 'neighbour');
      symlinkSync('../neighbour.txt', join(project, 'neighbour'));
      return paths;
    }

    it('inside their source are copied as links; the others are skipped and reported unless followSymlinks', async () => {
      const { allowed } = linkedTree();
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: join(allowed, 'project') }], { allowedHostRoots: [allowed] });
      expect(await kindsOf(workspace)).toEqual({
        'project/': 'dir',
        'project/broken': '120000 missing',
        'project/in-dir': '120000 sub',
        'project/in-file': '120000 real.txt',
        'project/real.txt': '100644 real',
        'project/sub/': 'dir',
        'project/sub/file.txt': '100644 sub',
        'project/sub/loop': '120000 ..',
      });
      expect((await workspace.read('project/in-dir/loop/in-file')).content).toBe('real');
      expect(result.skipped.map((s) => s.path)).toEqual([
        'project/abs-out-dir',
        'project/abs-out-file',
        'project/neighbour',
        'project/rel-out-dir',
        'project/rel-out-file',
      ]);
      expect(result.skipped.every((s) => s.reason.includes('symlink leaving its source'))).toBe(true);
    });

    it('with followSymlinks, links leaving their source are copied as what they reach, only inside the allowed roots', async () => {
      const { allowed, base } = linkedTree();
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: join(allowed, 'project'), followSymlinks: true }], {
        allowedHostRoots: [allowed],
      });
      expect(await kindsOf(workspace)).toEqual({
        'project/': 'dir',
        'project/broken': '120000 missing',
        'project/in-dir': '120000 sub',
        'project/in-file': '120000 real.txt',
        'project/neighbour': '100644 neighbour',
        'project/real.txt': '100644 real',
        'project/sub/': 'dir',
        'project/sub/file.txt': '100644 sub',
        'project/sub/loop': '120000 ..',
      });
      expect(Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]))).toEqual({
        'project/abs-out-dir': 'symlink target outside the allowed roots',
        'project/abs-out-file': 'symlink target outside the allowed roots',
        'project/rel-out-dir': 'symlink target outside the allowed roots',
        'project/rel-out-file': 'symlink target outside the allowed roots',
      });
      expect(JSON.stringify(result)).not.toContain(base);
      expect(JSON.stringify(await contentsOf(workspace))).not.toContain('SECRET');
    });

    it('a link whose `..` climb out of its source, or that reaches outside through another link, is not copied as a link', async () => {
      const { allowed, project } = layout({ 'real.txt': 'real', 'sub/file.txt': 'sub' });
      symlinkSync('..', join(project, 'up'));
      symlinkSync('up/allowed-file', join(project, 'through-up'));
      symlinkSync('sub/../../x', join(project, 'climbs'));
      writeFileSync(join(allowed, 'allowed-file'), 'beside the source');
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
      expect(Object.keys(await kindsOf(workspace))).toEqual(['project/', 'project/real.txt', 'project/sub/', 'project/sub/file.txt']);
      expect(result.skipped.map((s) => s.path)).toEqual(['project/climbs', 'project/through-up', 'project/up']);
    });

    it('keeps executable bits and links through hydration, snapshot and restore', async () => {
      const { allowed, project } = layout({ 'bin/run.sh': '#!/bin/sh\n', 'data.txt': 'data' });
      chmodSync(join(project, 'bin/run.sh'), 0o755);
      symlinkSync('bin/run.sh', join(project, 'run'));
      const workspace = await create();
      await hydrate(workspace, [{ hostPath: project, path: 'p' }], { allowedHostRoots: [allowed] });
      const hydrated = await kindsOf(workspace);
      expect(hydrated).toEqual({
        'p/': 'dir',
        'p/bin/': 'dir',
        'p/bin/run.sh': '100755 #!/bin/sh\n',
        'p/data.txt': '100644 data',
        'p/run': '120000 bin/run.sh',
      });
      const snapshot = await workspace.snapshot();
      await workspace.setExecutable('p/bin/run.sh', false);
      await workspace.delete('p/run');
      await workspace.restore(snapshot);
      expect(await kindsOf(workspace)).toEqual(hydrated);
    });
  });

  it('a file or a parent directory swapped for a link to outside between the walk and the copy is not read through', async () => {
    const { allowed, project, secret } = layout({ 'ok.txt': 'ok', 'swapped.txt': 'plain', 'dir/key.pem': 'public key' });
    const workspace = await create();
    // The snapshot is taken after the walk and before the copy: swap `dir` for a link to the secret then.
    const racing = new Proxy(workspace, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property === 'snapshot') {
          return async (...args: unknown[]) => {
            renameSync(join(project, 'dir'), join(project, 'dir-old'));
            symlinkSync(secret, join(project, 'dir'));
            renameSync(join(project, 'swapped.txt'), join(project, 'swapped-old.txt'));
            symlinkSync(join(secret, 'key.pem'), join(project, 'swapped.txt'));
            return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const result = await hydrate(racing, [{ hostPath: project, path: '/' }], { allowedHostRoots: [allowed] });
    expect(JSON.stringify(await contentsOf(workspace))).not.toContain('SECRET');
    expect(await contentsOf(workspace)).toEqual({ 'ok.txt': 'ok' });
    expect(result.skipped).toEqual([
      { path: 'dir/key.pem', reason: 'moved outside the allowed roots during hydration' },
      { path: 'swapped.txt', reason: 'became a symlink during hydration' },
    ]);
  });

  describe('include and exclude', () => {
    const tree = {
      'src/index.ts': 'index',
      'src/deep/nested/util.ts': 'util',
      'src/deep/readme.md': 'readme',
      'src/node_modules/pkg/index.ts': 'dep',
      'node_modules/pkg/index.js': 'dep',
      '.env': 'SECRET=1',
      '.github/workflows/ci.yml': 'ci',
      'build.log': 'log',
      'logs/old.log': 'log',
      'empty/': null,
    } as const;

    it('match paths relative to the host path with dot: true, and exclude wins', async () => {
      const { allowed, project } = layout(tree as never);
      const workspace = await create();
      await hydrate(
        workspace,
        [{ hostPath: project, path: 'p', include: ['**/*.ts', '.github/**'], exclude: ['**/node_modules/**', 'src/deep/nested/**'] }],
        {
          allowedHostRoots: [allowed],
        },
      );
      expect(Object.keys(await contentsOf(workspace)).filter((p) => !p.endsWith('/'))).toEqual([
        'p/.github/workflows/ci.yml',
        'p/src/index.ts',
      ]);
    });

    it('exclude alone keeps dotfiles unless named, prunes whole directories, and keeps empty directories', async () => {
      const { allowed, project } = layout(tree as never);
      const workspace = await create();
      await hydrate(workspace, [{ hostPath: project, path: '/', exclude: ['node_modules', '**/*.log', '.env'] }], {
        allowedHostRoots: [allowed],
      });
      expect(Object.keys(await contentsOf(workspace))).toEqual([
        '.github/',
        '.github/workflows/',
        '.github/workflows/ci.yml',
        'empty/',
        'logs/',
        'src/',
        'src/deep/',
        'src/deep/nested/',
        'src/deep/nested/util.ts',
        'src/deep/readme.md',
        'src/index.ts',
        'src/node_modules/',
        'src/node_modules/pkg/',
        'src/node_modules/pkg/index.ts',
      ]);
    });

    it('include on a file that is also excluded: exclude wins', async () => {
      const { allowed, project } = layout({ 'a.ts': 'a', 'b.ts': 'b' });
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: project, include: ['*.ts'], exclude: ['b.ts'] }], {
        allowedHostRoots: [allowed],
      });
      expect(result.files).toBe(1);
      expect(await contentsOf(workspace)).toEqual({ 'project/': '', 'project/a.ts': 'a' });
    });
  });

  describe('source paths', () => {
    it('default to the base name as given, accept nested targets and the root, and copy single files', async () => {
      const { allowed, project } = layout({ 'a.txt': 'a', 'sub/b.txt': 'b' });
      const workspace = await create();
      const cwd = process.cwd();
      process.chdir(allowed);
      try {
        await hydrate(workspace, [{ hostPath: './project/' }], { allowedHostRoots: [allowed] });
      } finally {
        process.chdir(cwd);
      }
      await hydrate(
        workspace,
        [
          { hostPath: join(project, 'sub'), path: 'x/y' },
          { hostPath: join(project, 'sub'), path: '/' },
          { hostPath: join(project, 'a.txt'), path: 'single/renamed.txt' },
          { hostPath: join(project, 'a.txt') },
        ],
        { allowedHostRoots: [allowed] },
      );
      expect(await contentsOf(workspace)).toEqual({
        'a.txt': 'a',
        'b.txt': 'b',
        'project/': '',
        'project/a.txt': 'a',
        'project/sub/': '',
        'project/sub/b.txt': 'b',
        'single/': '',
        'single/renamed.txt': 'a',
        'x/': '',
        'x/y/': '',
        'x/y/b.txt': 'b',
      });
    });

    it('refuses a path that climbs above the root, and unknown source keys', async () => {
      const { allowed, project } = layout();
      const workspace = await create();
      await expect(hydrate(workspace, [{ hostPath: project, path: '../up' }], { allowedHostRoots: [allowed] })).rejects.toMatchObject({
        code: 'EACCES',
      });
      await expect(
        hydrate(workspace, [{ hostPath: project, exlude: ['x'] } as never], { allowedHostRoots: [allowed] }),
      ).rejects.toMatchObject({ code: 'EINVAL' });
      expect(HostSourceSchema.safeParse({ hostPath: '' }).success).toBe(false);
      expect(await workspace.list('/')).toEqual([]);
    });

    it('refuses the old spelling mountPath, naming path, and writes nothing', async () => {
      const { allowed, project } = layout();
      const workspace = await create();
      const error = await caught(() =>
        hydrate(workspace, [{ hostPath: project, mountPath: 'p' } as never], { allowedHostRoots: [allowed] }),
      );
      expect(error).toMatchObject({ name: 'InvalidArgumentError', code: 'EINVAL' });
      expect((error as Error).message).toContain('`mountPath` is now `path`');
      expect(await workspace.list('/')).toEqual([]);
    });
  });

  describe('all or nothing', () => {
    it('a source over maxBytes fails the whole hydration, before anything is written', async () => {
      const { allowed, project } = layout({ 'a.bin': new Uint8Array(600), 'b.bin': new Uint8Array(600) });
      const other = host.tree({ 'small.txt': 'small' }, join(allowed, 'other'));
      const workspace = await create();
      await workspace.write('keep.txt', 'kept');
      const before = await contentsOf(workspace);
      const error = await caught(() =>
        hydrate(workspace, [{ hostPath: other }, { hostPath: project, maxBytes: 1000 }], { allowedHostRoots: [allowed] }),
      );
      expect(error).toMatchObject({ name: 'LimitExceededError', code: 'EFBIG' });
      expect(error.message).toContain('maxBytes');
      expect(await contentsOf(workspace)).toEqual(before);
      // Exactly at the budget is fine.
      const result = await hydrate(workspace, [{ hostPath: project, maxBytes: 1200 }], { allowedHostRoots: [allowed] });
      expect(result).toMatchObject({ files: 2, bytes: 1200 });
    });

    it('a failure in the middle of the copy restores the workspace exactly', async () => {
      const { allowed, project } = layout({ 'a.txt': 'a', 'b.txt': 'new b', 'c/d.txt': 'd' });
      const workspace = await create();
      await workspace.write('project/b.txt', 'old b');
      await workspace.write('project/c/d.txt/blocker', 'a directory where the source has a file');
      const before = await contentsOf(workspace);
      const error = await caught(() => hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] }));
      expect(error).toMatchObject({ code: 'EISDIR' });
      expect(await contentsOf(workspace)).toEqual(before);
    });

    it('a rollback also removes what it wrote under paths a host workspace excludes from snapshots', async () => {
      if (backend.name !== 'host') return;
      const { allowed, project } = layout({ 'cache/x.bin': 'x', 'cache/deep/y.bin': 'y', 'src/a.ts': 'a', 'z.txt': 'z' });
      const workspace = createWorkspace(hostDriver({ exclude: ['**/cache'] }));
      try {
        await workspace.write('project/cache/old.bin', 'was there before');
        await stoppedAtLastFile(workspace, project, allowed);
        expect(readdirSync(join(workspace.root, 'project')).sort()).toEqual(['cache']);
        expect(readdirSync(join(workspace.root, 'project', 'cache'))).toEqual(['old.bin']);
      } finally {
        await workspace.dispose();
      }
    });

    it('a rollback removes a dangling link it copied under a path a host workspace excludes from snapshots', async () => {
      if (backend.name !== 'host') return;
      const { allowed, project } = layout({ 'src/a.ts': 'a', 'z.txt': 'z' });
      symlinkSync('nowhere', join(project, 'cache'));
      const workspace = createWorkspace(hostDriver({ exclude: ['**/cache'] }));
      try {
        await workspace.mkdir('project');
        await stoppedAtLastFile(workspace, project, allowed);
        expect(readdirSync(join(workspace.root, 'project'))).toEqual([]);
      } finally {
        await workspace.dispose();
      }
    });

    it('a throwing onProgress and an abort mid-copy roll back too', async () => {
      const { allowed, project } = layout({ 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' });
      const workspace = await create();
      await workspace.write('keep.txt', 'kept');
      const before = await contentsOf(workspace);
      const thrown = await caught(() =>
        hydrate(workspace, [{ hostPath: project }], {
          allowedHostRoots: [allowed],
          onProgress: (progress) => {
            if (progress.files === 2) throw new Error('stop');
          },
        }),
      );
      expect(thrown.message).toBe('stop');
      expect(await contentsOf(workspace)).toEqual(before);

      const controller = new AbortController();
      const aborted = await caught(() =>
        hydrate(workspace, [{ hostPath: project }], {
          allowedHostRoots: [allowed],
          signal: controller.signal,
          onProgress: (progress) => {
            if (progress.files === 1) controller.abort();
          },
        }),
      );
      expect(aborted).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' });
      expect(await contentsOf(workspace)).toEqual(before);

      await expect(
        hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed], signal: AbortSignal.abort() }),
      ).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' });
      expect(await contentsOf(workspace)).toEqual(before);
    });

    it('an abort from a timer is honoured during a long copy (the copy yields to the event loop)', async () => {
      const tree: Record<string, string> = {};
      for (let i = 0; i < 3000; i += 1) tree[`d${i % 30}/f${i}.txt`] = `file ${i}\n`.repeat(50);
      const { allowed, project } = layout(tree);
      const workspace = await create();
      const controller = new AbortController();
      let scheduled = false;
      const error = await caught(() =>
        hydrate(workspace, [{ hostPath: project }], {
          allowedHostRoots: [allowed],
          signal: controller.signal,
          onProgress: () => {
            if (!scheduled) setTimeout(() => controller.abort(), 0);
            scheduled = true;
          },
        }),
      );
      expect(error.name).toBe('AbortError');
      expect(await workspace.list('/')).toEqual([]);
    });

    it('a file that grows past the budget between the walk and the copy fails and rolls back', async () => {
      const { allowed, project } = layout({ 'a.txt': 'aaaa', 'b.txt': 'bbbb' });
      const workspace = await create();
      // The snapshot is taken after the walk and before the copy: grow a file right then.
      const growing = new Proxy(workspace, {
        get(target, property) {
          const value = Reflect.get(target, property, target) as unknown;
          if (property === 'snapshot') {
            return async (...args: unknown[]) => {
              appendFileSync(join(project, 'b.txt'), 'grown past the budget');
              return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            };
          }
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const error = await caught(() => hydrate(growing, [{ hostPath: project, maxBytes: 10 }], { allowedHostRoots: [allowed] }));
      expect(error).toMatchObject({ code: 'EFBIG' });
      expect(error.message).toContain('grew');
      expect(await workspace.list('/')).toEqual([]);
    });

    it('overlapping sources: later files win, directories merge; a file/directory clash fails with nothing written', async () => {
      const base = host.dir();
      host.tree(
        {
          'one/shared.txt': 'from one',
          'one/only-one.txt': '1',
          'one/dir/x.txt': 'x',
          'two/shared.txt': 'from two',
          'two/dir/y.txt': 'y',
          'three/shared.txt/': null,
        },
        base,
      );
      const workspace = await create();
      const result = await hydrate(
        workspace,
        [
          { hostPath: join(base, 'one'), path: 'm' },
          { hostPath: join(base, 'two'), path: 'm' },
        ],
        { allowedHostRoots: [base] },
      );
      expect(await contentsOf(workspace)).toEqual({
        'm/': '',
        'm/dir/': '',
        'm/dir/x.txt': 'x',
        'm/dir/y.txt': 'y',
        'm/only-one.txt': '1',
        'm/shared.txt': 'from two',
      });
      expect(result.files).toBe(4);

      const fresh = await create();
      const clash = await caught(() =>
        hydrate(
          fresh,
          [
            { hostPath: join(base, 'one'), path: 'm' },
            { hostPath: join(base, 'three'), path: 'm' },
          ],
          { allowedHostRoots: [base] },
        ),
      );
      expect(clash).toMatchObject({ path: 'm/shared.txt' });
      expect(['EISDIR', 'ENOTDIR']).toContain(clash.code);
      expect(await fresh.list('/')).toEqual([]);
      // A single-file source onto a hydrated directory's path clashes too.
      await expect(
        hydrate(
          fresh,
          [
            { hostPath: join(base, 'one'), path: 'm' },
            { hostPath: join(base, 'two', 'shared.txt'), path: 'm/dir' },
          ],
          { allowedHostRoots: [base] },
        ),
      ).rejects.toMatchObject({ code: 'EISDIR', path: 'm/dir' });
      expect(await fresh.list('/')).toEqual([]);
    });
  });

  describe('content and reporting', () => {
    it('copies binary files byte for byte, including empty and large ones, and keeps empty directories', async () => {
      const random = randomBytes(3 * 1024 * 1024 + 7);
      const invalidUtf8 = Uint8Array.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x80, 0x0a, 0x0d]);
      const { allowed, project } = layout({
        'bin/random.dat': random,
        'bin/bad.bin': invalidUtf8,
        'bin/empty.dat': new Uint8Array(0),
        'crlf.txt': 'a\r\nb\r\n',
        'keep/': null,
        'keep/nested/empty/': null,
      });
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: project, path: '/' }], { allowedHostRoots: [allowed] });
      expect(result).toEqual({ files: 4, bytes: random.byteLength + invalidUtf8.byteLength + 6, skipped: [] });
      expect(Buffer.from((await workspace.readBytes('bin/random.dat')).content).equals(random)).toBe(true);
      expect(Array.from((await workspace.readBytes('bin/bad.bin')).content)).toEqual(Array.from(invalidUtf8));
      expect((await workspace.stat('bin/empty.dat')).sizeBytes).toBe(0);
      expect((await workspace.read('crlf.txt')).content).toBe('a\r\nb\r');
      expect(await workspace.list('keep')).toMatchObject([{ name: 'nested', isDirectory: true }]);
      expect(await workspace.list('keep/nested/empty')).toEqual([]);
    });

    it.runIf(backend.name === 'host')(
      'keeps the executable bit, which a host snapshot holds, when hydrating into a host workspace',
      async () => {
        const { allowed, project } = layout({ 'run.sh': '#!/bin/sh\necho hi\n', 'data.txt': 'data' });
        chmodSync(join(project, 'run.sh'), 0o755);
        chmodSync(join(project, 'data.txt'), 0o644);
        const workspace = await create();
        await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
        const isExecutable = (path: string) => (statSync(join(workspace.root, path)).mode & 0o100) !== 0;
        expect(isExecutable('project/run.sh')).toBe(true);
        expect(isExecutable('project/data.txt')).toBe(false);
        const snapshot = await workspace.snapshot();
        chmodSync(join(workspace.root, 'project/run.sh'), 0o644);
        await workspace.restore(snapshot);
        expect(isExecutable('project/run.sh')).toBe(true);
      },
    );

    it.runIf(backend.name === 'host')(
      "skips a source file named like the host backend's temp files instead of failing the hydration",
      async () => {
        const { allowed, project } = layout({ '.sessionfs-tmp-0123456789abcdef': 'looks like a temp file', 'real.txt': 'real' });
        const workspace = await create();
        const result = await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
        expect(result.files).toBe(1);
        expect(result.skipped).toEqual([
          { path: 'project/.sessionfs-tmp-0123456789abcdef', reason: "name reserved for the host backend's temporary files" },
        ]);
        expect(await contentsOf(workspace)).toEqual({ 'project/': '', 'project/real.txt': 'real' });
      },
    );

    it('reports progress per file, in path order, with running totals', async () => {
      const { allowed, project } = layout({ 'b.txt': 'bb', 'a.txt': 'a', 'c/d.txt': 'ddd' });
      const workspace = await create();
      const seen: HydrateProgress[] = [];
      const result = await hydrate(workspace, [{ hostPath: project }], {
        allowedHostRoots: [allowed],
        onProgress: (p) => seen.push({ ...p }),
      });
      expect(seen).toEqual([
        { phase: 'write', done: 1, files: 1, bytes: 1, path: 'project/a.txt' },
        { phase: 'write', done: 2, files: 2, bytes: 3, path: 'project/b.txt' },
        { phase: 'write', done: 3, files: 3, bytes: 6, path: 'project/c/d.txt' },
        { phase: 'write', done: 3, total: 3, files: 3, bytes: 6, path: 'project/c/d.txt' },
      ]);
      expect(result).toMatchObject({ files: 3, bytes: 6 });
    });

    it('skips and reports paths over the creation limits and names that cannot be workspace paths', async () => {
      const long = 'n'.repeat(30);
      const { allowed, project } = layout({
        'ok/a.txt': 'a',
        'd1/d2/d3/deep.txt': 'deep',
        'd1/d2/d3/d4/': null,
        [`${long}.txt`]: 'long',
        'back\\slash.txt': 'x',
        'new\nline.txt': 'y',
      });
      const workspace = await create({ limits: { maxPathDepth: 4, maxSegmentLength: 20 } });
      const result = await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
      expect(await contentsOf(workspace)).toEqual({
        'project/': '',
        'project/d1/': '',
        'project/d1/d2/': '',
        'project/d1/d2/d3/': '',
        'project/ok/': '',
        'project/ok/a.txt': 'a',
      });
      expect(result.skipped).toEqual([
        { path: 'project/back\\\\slash.txt', reason: expect.stringContaining('cannot be a workspace path') },
        { path: 'project/d1/d2/d3/d4', reason: expect.stringContaining('limits') },
        { path: 'project/d1/d2/d3/deep.txt', reason: expect.stringContaining('limits') },
        { path: 'project/new\\nline.txt', reason: expect.stringContaining('cannot be a workspace path') },
        { path: `project/${long}.txt`, reason: expect.stringContaining('limits') },
      ]);
    });

    it('skips a name whose bytes are not UTF-8, which no workspace path could name back', async () => {
      const { allowed, project } = layout({ 'ok.txt': 'ok' });
      writeFileSync(Buffer.concat([Buffer.from(`${project}/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'invalid name');
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
      expect(await contentsOf(workspace)).toEqual({ 'project/': '', 'project/ok.txt': 'ok' });
      expect(result.skipped).toEqual([{ path: 'project/bad-\ufffd\ufffd.txt', reason: expect.stringContaining('not UTF-8') }]);
    });

    it('skips FIFOs and other special files', async () => {
      const { allowed, project } = layout({ 'a.txt': 'a' });
      try {
        execFileSync('mkfifo', [join(project, 'pipe')]);
      } catch {
        return; // no mkfifo on this system
      }
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
      expect(result.skipped).toEqual([{ path: 'project/pipe', reason: 'not a regular file or directory' }]);
      expect(result.files).toBe(1);
    });

    it('a read-only workspace is refused first, before any other check', async () => {
      const workspace = await create({ readOnly: true });
      await expect(hydrate(workspace, [{ hostPath: '/nonexistent' }], {} as never)).rejects.toMatchObject({
        name: 'ReadOnlyError',
        code: 'EROFS',
      });
    });

    it('never writes through a link already planted in a host root (the fast path falls back to the protocol)', async () => {
      if (backend.name !== 'host') return;
      const { allowed, project, base } = layout({ 'a.txt': 'a', 'sub/b.txt': 'b' });
      const outside = host.tree({ 'untouched.txt': 'x' });
      const workspace = await create();
      symlinkSync(outside, join(workspace.root, 'project'));
      const error = await caught(() => hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] }));
      expect(error.code).toBe('EACCES');
      expectNoHostPath(error, [base, outside]);
      expect(readdirSync(outside)).toEqual(['untouched.txt']);
      // A link inside the root is followed as the protocol follows it.
      rmSync(join(workspace.root, 'project'));
      mkdirSync(join(workspace.root, 'real'));
      symlinkSync('real', join(workspace.root, 'project'));
      await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
      expect(readdirSync(join(workspace.root, 'real')).sort()).toEqual(['a.txt', 'sub']);
    });

    it('hydrating nothing writes nothing and takes no snapshot', async () => {
      const { allowed, project } = layout({ 'a.txt': 'a' });
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: project, include: ['*.none'], path: '/' }], {
        allowedHostRoots: [allowed],
      });
      expect(result).toEqual({ files: 0, bytes: 0, skipped: [] });
      expect(await workspace.list('/')).toEqual([]);
    });
  });
});

describe('hydrate into a workspace without file kinds (a driver without the optional primitives)', () => {
  const host = hostTrees();

  for (const name of ['kv (third-party driver)', 'strict (third-party driver)']) {
    const create = workspaceFactory(backendNamed(name));
    it(`${name}: drops executable bits and skips links, reporting them, instead of failing`, async () => {
      const allowed = host.dir();
      const project = host.tree({ 'run.sh': '#!/bin/sh\n', 'sub/a.txt': 'a' }, join(allowed, 'project'));
      chmodSync(join(project, 'run.sh'), 0o755);
      symlinkSync('sub/a.txt', join(project, 'a-link'));
      const workspace = await create();
      const result = await hydrate(workspace, [{ hostPath: project }], { allowedHostRoots: [allowed] });
      expect(await contentsOf(workspace)).toEqual({
        'project/': '',
        'project/run.sh': '#!/bin/sh\n',
        'project/sub/': '',
        'project/sub/a.txt': 'a',
      });
      expect(result).toMatchObject({
        files: 2,
        skipped: [{ path: 'project/a-link', reason: 'symlink (this workspace keeps no symlinks)' }],
      });
    });
  }
});
