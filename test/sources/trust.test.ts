import { describe, expect, it } from 'vitest';
import { hydrate } from '../../src/sources/index.js';
import { createSession } from '../../src/session/index.js';
import { contentsOf } from '../../src/testing/harness.js';
import { BACKENDS, SESSION_KINDS, caught, hostTrees, workspaceFactory } from '../support/backends.js';
import { type ManagedWorkspace } from '../../src/workspace/create-workspace.js';

const host = hostTrees();

/** A project checkout: a repository's internals next to the files, and a secret the policy denies. */
const PROJECT = {
  'a.ts': 'a',
  '.env': 'SECRET=1',
  'config/.env': 'SECRET=2',
  '.git/config': '[core]\n',
  '.git/hooks/pre-commit.sample': '#!/bin/sh\n',
  'vendor/lib/.hg/hgrc': '[hooks]\n',
  'old/.svn/entries': '12\n',
  'new/.jj/repo/store': 'x',
  'worktree/.git': 'gitdir: /somewhere/else/.git/worktrees/w\n',
  'worktree/b.ts': 'b',
};
const VERSION_CONTROL = "version-control directory (a source's includeGit: 'read-only' brings it in read-only)";

describe.each(BACKENDS)('hydration and the trust rules on $name', (backend) => {
  const create = workspaceFactory(backend);

  it('skips version-control internals by default and lists each in skipped with its reason', async () => {
    const dir = host.tree(PROJECT);
    const workspace = await create();
    const result = await hydrate(workspace, [{ hostPath: dir, path: 'p' }], { allowedHostRoots: [dir] });
    expect(result.skipped).toEqual([
      { path: 'p/.git', reason: VERSION_CONTROL },
      { path: 'p/new/.jj', reason: VERSION_CONTROL },
      { path: 'p/old/.svn', reason: VERSION_CONTROL },
      { path: 'p/vendor/lib/.hg', reason: VERSION_CONTROL },
      { path: 'p/worktree/.git', reason: 'a version-control pointer file (a .git file names a repository outside the source)' },
    ]);
    expect(Object.keys(await contentsOf(workspace)).filter((path) => /\.(git|hg|svn|jj)\b/.test(path))).toEqual([]);
  });

  it('skips a file the policy denies and lists it, instead of failing the hydration', async () => {
    const dir = host.tree(PROJECT);
    const workspace = await create({ policy: { deny: ['**/.env'] } });
    const result = await hydrate(workspace, [{ hostPath: dir, path: 'p' }], { allowedHostRoots: [dir] });
    expect(result.skipped).toEqual(
      expect.arrayContaining([
        { path: 'p/.env', reason: 'denied by the workspace policy' },
        { path: 'p/config/.env', reason: 'denied by the workspace policy' },
      ]),
    );
    expect(result.files).toBe(2);
    expect(await workspace.exists('p/a.ts')).toBe(true);
  });
});

describe.each(SESSION_KINDS)('createSession on %s: policy and protect apply to the workspace and its hydration', (kind) => {
  it('hydrates without the denied file, lists it in hydration.skipped, and denies the model the path', async () => {
    const dir = host.tree(PROJECT);
    const session = await createSession({
      backend: kind,
      sources: [{ hostPath: dir, path: 'p', includeGit: 'read-only' }],
      allowedHostRoots: [dir],
      policy: { deny: ['**/.env'] },
    });
    await using _ = session;
    expect(session.hydration?.skipped).toContainEqual({ path: 'p/.env', reason: 'denied by the workspace policy' });
    expect((session.filesystem as ManagedWorkspace).policy?.deny).toEqual(['**/.env']);
    expect(await caught(() => session.filesystem.read('p/.env'))).toMatchObject({ name: 'PolicyError', code: 'EPERM' });
    // includeGit: 'read-only' brought the repository's internals in, read-only.
    expect((await session.filesystem.readBytes('p/.git/config')).content.byteLength).toBeGreaterThan(0);
    expect(await caught(() => session.filesystem.write('p/.git/config', 'x'))).toMatchObject({ name: 'PolicyError', code: 'EPERM' });
  });

  it('refuses an option it does not take, naming it, instead of ignoring it', async () => {
    const error = await caught(() => createSession({ backend: kind, polcy: { deny: ['**/.env'] } } as never));
    expect(error).toMatchObject({ name: 'InvalidArgumentError', code: 'EINVAL' });
    expect(error.message).toContain('polcy');
    const badProtect = await caught(() => createSession({ backend: kind, protect: 'none' } as never));
    expect(badProtect).toMatchObject({ name: 'InvalidArgumentError' });
  });

  it('protect: [] (the orchestrator) makes hydrated .git content ordinary', async () => {
    const dir = host.tree(PROJECT);
    const session = await createSession({
      backend: kind,
      sources: [{ hostPath: dir, path: 'p', includeGit: 'read-only' }],
      allowedHostRoots: [dir],
      protect: [],
    });
    await using _ = session;
    await session.filesystem.write('p/.git/config', 'changed');
  });
});

describe('createSession on overlay', () => {
  it('refuses a policy (which it cannot apply) and hides .git unless includeGit asks for it', async () => {
    const dir = host.tree(PROJECT);
    const refused = await caught(() =>
      createSession({ backend: 'overlay', sources: [{ hostPath: dir }], allowedHostRoots: [dir], policy: { deny: ['**/.env'] } }),
    );
    expect(refused).toMatchObject({ name: 'InvalidArgumentError' });
    const session = await createSession({ backend: 'overlay', sources: [{ hostPath: dir, path: '/' }], allowedHostRoots: [dir] });
    await using _ = session;
    expect(await session.filesystem.exists('.git')).toBe(false);
    const shown = await createSession({
      backend: 'overlay',
      sources: [{ hostPath: dir, path: '/', includeGit: 'read-only' }],
      allowedHostRoots: [dir],
    });
    await using __ = shown;
    expect(await shown.filesystem.exists('.git/config')).toBe(true);
    expect(await caught(() => shown.filesystem.write('.git/config', 'x'))).toMatchObject({ name: 'PolicyError', code: 'EPERM' });
  });
});
