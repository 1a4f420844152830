import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { exportTo } from '../../src/export/export.js';
import { hydrate } from '../../src/sources/index.js';
import { kindsOf } from '../../src/testing/file-kinds.js';
import { tempDirs } from '../../src/testing/harness.js';
import { BACKENDS, workspaceFactory } from '../support/backends.js';
import { filesOf, gitApply } from '../support/host-files.js';

/** Native git, isolated from the user's configuration, with file modes and links as git records them. */
async function git(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const result = await execa(
    'git',
    ['-c', 'core.fileMode=true', '-c', 'core.symlinks=true', '-c', 'user.name=t', '-c', 'user.email=t@t', ...args],
    { cwd, env: { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', ...env }, extendEnv: true },
  );
  return result.stdout;
}

/**
 * What git records of directory `dir` against the source repository: `git ls-files -s` (mode, blob id and
 * path of every file and link) and `git diff --stat` from the source's commit, through an index of its own
 * (the source's own index and work tree are never touched).
 */
async function gitView(source: string, dir: string, index: string): Promise<{ files: string; stat: string }> {
  const env = { GIT_INDEX_FILE: index };
  const at = ['--git-dir', join(source, '.git'), '--work-tree', dir];
  await git(dir, [...at, 'add', '-A'], env);
  return {
    files: await git(dir, [...at, 'ls-files', '-s'], env),
    stat: await git(dir, [...at, 'diff', '--cached', '--stat', 'HEAD'], env),
  };
}

/** The source tree of the issue: an executable script, a relative link, a link to a directory, a dangling link. */
function sourceTree(dir: string): void {
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'src/lib'), { recursive: true });
  writeFileSync(join(dir, 'bin/run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(dir, 'bin/run.sh'), 0o755);
  writeFileSync(join(dir, 'src/lib/a.txt'), 'a\n');
  writeFileSync(join(dir, 'src/data.bin'), Buffer.from([0, 1, 2, 255, 254]));
  symlinkSync('lib/a.txt', join(dir, 'src/a-link.txt'));
  symlinkSync('src/lib', join(dir, 'lib-dir'));
  symlinkSync('missing/nowhere.txt', join(dir, 'dangling'));
}

// Every backend with file kinds (the third-party drivers without the optional primitives are left out).
const KIND_BACKENDS = BACKENDS.filter((backend) => backend.fileKinds !== false);

describe.each(KIND_BACKENDS)('file kinds round trip on $name', (backend) => {
  const create = workspaceFactory(backend);
  const tempDir = tempDirs();

  it('hydrate → snapshot → change → restore → patch → git apply → export, byte- and mode-exact', async () => {
    const base = tempDir();
    const source = join(base, 'source');
    mkdirSync(source);
    sourceTree(source);
    await git(source, ['init', '-q']);
    await git(source, ['add', '-A']);
    await git(source, ['commit', '-q', '-m', 'source']);
    const sourceView = { files: await git(source, ['ls-files', '-s']), stat: '' };

    const workspace = await create();
    const hydrated = await hydrate(workspace, [{ hostPath: source, path: '/' }], { allowedHostRoots: [base] });
    expect(hydrated.skipped).toEqual([{ path: '.git', reason: expect.stringContaining('version-control') }]);
    const planted = await kindsOf(workspace);
    expect(planted).toEqual({
      'bin/': 'dir',
      'bin/run.sh': '100755 #!/bin/sh\necho hi\n',
      dangling: '120000 missing/nowhere.txt',
      'lib-dir': '120000 src/lib',
      'src/': 'dir',
      'src/a-link.txt': '120000 lib/a.txt',
      'src/data.bin': `100644 ${Buffer.from([0, 1, 2, 255, 254]).toString('latin1')}`,
      'src/lib/': 'dir',
      'src/lib/a.txt': '100644 a\n',
    });
    const before = await workspace.snapshot();

    // Change every kind: a mode alone, content and mode, links retargeted, a link gone, new ones.
    await workspace.setExecutable('bin/run.sh', false);
    await workspace.write('bin/new-tool', '#!/bin/sh\n', { executable: true });
    await workspace.write('src/lib/a.txt', 'a, changed\n');
    await workspace.setExecutable('src/lib/a.txt', true);
    await workspace.write('src/lib/b.txt', 'b\n');
    await workspace.delete('src/a-link.txt');
    await workspace.symlink('lib/b.txt', 'src/a-link.txt');
    await workspace.delete('lib-dir');
    await workspace.symlink('src', 'lib-dir');
    await workspace.delete('dangling');
    await workspace.symlink('../bin/new-tool', 'src/tool-link');
    const after = await workspace.snapshot();
    const changed = await kindsOf(workspace);

    await workspace.restore(before);
    expect(await kindsOf(workspace)).toEqual(planted);
    expect(await workspace.diff(before)).toEqual([]);

    // The patch, applied by native git to a clone of the source, gives the changed tree.
    const patched = join(base, 'patched');
    await git(base, ['clone', '-q', source, patched]);
    await gitApply(patched, await workspace.patch(before, after));

    // The changed tree, exported, is that very tree.
    await workspace.restore(after);
    expect(await kindsOf(workspace)).toEqual(changed);
    const exported = join(base, 'exported');
    const result = await exportTo(workspace, exported, { allowedHostRoots: [base] });
    expect(result.skipped).toBeUndefined();
    expect(filesOf(exported)).toEqual(filesOf(patched));
    const patchedView = await gitView(source, patched, join(base, 'index-patched'));
    expect(await gitView(source, exported, join(base, 'index-exported'))).toEqual(patchedView);
    expect(patchedView.stat).toContain('8 files changed, 6 insertions(+), 4 deletions(-)');

    // And the original state, exported, is the source, exactly as git records it.
    await workspace.restore(before);
    const original = join(base, 'original');
    await exportTo(workspace, original, { allowedHostRoots: [base] });
    expect(filesOf(original)).toEqual(filesOf(source));
    expect(await gitView(source, original, join(base, 'index-original'))).toEqual(sourceView);
  });
});
