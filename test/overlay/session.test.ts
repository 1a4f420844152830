import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { composeDriver, createWorkspace, memoryDriver } from '../../src/index.js';
import { createSession, defineTool, type HydratedSession } from '../../src/session/index.js';
import { type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { ExportConflictError } from '../../src/export/export-plan.js';
import { contentsOf } from '../../src/testing/harness.js';
import { hostTrees } from '../support/backends.js';
import { filesOf } from '../support/host-files.js';

const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
const tool = (name: WorkspaceToolName) => tools.get(name)!;

describe("createSession({ backend: 'overlay', sources })", () => {
  const trees = hostTrees();
  const sessions: HydratedSession[] = [];
  const open = async (options: Parameters<typeof createSession>[0]): Promise<HydratedSession> => {
    const session = await createSession(options);
    sessions.push(session);
    return session;
  };
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
  });

  it('shows the sources without copying them; tools work, a failed call rolls back, the host is never written', async () => {
    const repo = trees.tree({ 'src/a.ts': 'export const a = 1;\n', 'README.md': '# repo\n' });
    const session = await open({ backend: 'overlay', sources: [{ hostPath: repo, path: '/' }], allowedHostRoots: [repo] });
    expect(session.filesystem.backend).toBe('overlay');
    expect(session.hydration).toBeUndefined();
    expect((await session.runTool(tool('read_file'), { path: 'src/a.ts' })).success).toBe(true);
    const edit = await session.runTool(tool('edit_file'), { path: 'src/a.ts', old_string: '= 1', new_string: '= 2' });
    expect(edit.success).toBe(true);
    const failed = await session.runTool(tool('edit_file'), { path: 'src/a.ts', old_string: 'absent text', new_string: 'x' });
    expect(failed.success).toBe(false);
    expect((await session.filesystem.read('src/a.ts')).content).toBe('export const a = 2;');
    expect(readFileSync(join(repo, 'src/a.ts'), 'utf8')).toBe('export const a = 1;\n');
    await session.reset();
    expect((await session.filesystem.read('src/a.ts')).content).toBe('export const a = 1;');
  });

  it('mounts several sources over an in-memory root, and writeBack writes the changes to each writable source', async () => {
    const allowed = trees.dir();
    const code = trees.tree({ 'main.ts': 'm', 'old.ts': 'o', 'build/out.js': 'b' }, join(allowed, 'code'));
    const docs = trees.tree({ 'guide.md': 'g' }, join(allowed, 'docs'));
    const session = await open({
      backend: 'overlay',
      sources: [
        { hostPath: code, exclude: ['build'] },
        { hostPath: docs, readOnly: true },
      ],
      allowedHostRoots: [allowed],
    });
    const fs = session.filesystem;
    expect((await fs.list('/')).map((e) => e.name).sort()).toEqual(['code', 'docs']);
    expect(await fs.exists('code/build')).toBe(false);
    await fs.write('code/main.ts', 'M');
    await fs.delete('code/old.ts');
    await fs.write('code/new/c.ts', 'c');
    await fs.write('docs/guide.md', 'edited');
    await fs.write('scratch.txt', 'in memory only');
    expect(await session.writeBack()).toEqual({
      written: ['code/main.ts', 'code/new/c.ts'],
      deleted: ['code/old.ts'],
      conflicts: [],
      dryRun: false,
    });
    expect(filesOf(code)).toEqual({ 'main.ts': 'file 100644 M', 'new/c.ts': 'file 100644 c', 'build/out.js': 'file 100644 b' });
    expect(readFileSync(join(docs, 'guide.md'), 'utf8')).toBe('g');
    expect(await session.writeBack()).toEqual({ written: [], deleted: [], conflicts: [], dryRun: false });
  });

  it('a host file changed after the session replaced or deleted it is a write-back conflict, never overwritten', async () => {
    const repo = trees.tree({ 'a.txt': 'a', 'b.txt': 'b', 'dir/c.txt': 'c', 'read.txt': 'r' });
    const session = await open({ backend: 'overlay', sources: [{ hostPath: repo, path: 'p' }], allowedHostRoots: [repo] });
    const fs = session.filesystem;
    await fs.write('p/a.txt', 'agent');
    await fs.write('p/b.txt', 'agent b');
    await fs.delete('p/dir', { recursive: true });
    expect((await fs.read('p/read.txt')).content).toBe('r');
    writeFileSync(join(repo, 'a.txt'), 'human');
    writeFileSync(join(repo, 'dir/c.txt'), 'human c');
    writeFileSync(join(repo, 'read.txt'), 'human r');
    const conflicts = [
      { path: 'p/a.txt', reason: 'changed at the destination since the baseline' },
      { path: 'p/dir/c.txt', reason: 'changed at the destination since the baseline' },
    ];
    expect(await session.writeBack({ dryRun: true })).toEqual({ written: ['p/b.txt'], deleted: [], conflicts, dryRun: true });
    await expect(session.writeBack()).rejects.toBeInstanceOf(ExportConflictError);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('human');
    // The file the session read and that changed since: reported on access, and left out of the write-back.
    await expect(fs.read('p/read.txt')).rejects.toMatchObject({ code: 'ECONFLICT' });
    expect(await session.writeBack({ onConflict: 'skip' })).toEqual({ written: ['p/b.txt'], deleted: [], conflicts, dryRun: false });
    expect(existsSync(join(repo, 'dir/c.txt'))).toBe(true);
  });

  it('patch covers only what changed, even when a file the session never changed was rewritten on disk', async () => {
    const repo = trees.tree({ 'seen.txt': 'seen', 'x.txt': 'x' });
    const session = await open({ backend: 'overlay', sources: [{ hostPath: repo }], allowedHostRoots: [repo] });
    const name = repo.split('/').pop() as string;
    expect((await session.filesystem.read(`${name}/seen.txt`)).content).toBe('seen');
    const start = await session.filesystem.snapshot();
    writeFileSync(join(repo, 'seen.txt'), 'changed on disk');
    await session.filesystem.write(`${name}/x.txt`, 'y');
    const patch = await session.filesystem.patch(start);
    expect(patch).toContain(`+++ b/${name}/x.txt`);
    expect(patch).not.toContain('seen.txt');
  });

  it('refuses what an overlay cannot show', async () => {
    const repo = trees.tree({ 'f.txt': 'f' });
    await expect(createSession({ backend: 'overlay' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(createSession({ backend: 'overlay', sources: [{ hostPath: repo }] })).rejects.toMatchObject({ code: 'EACCES' });
    await expect(
      createSession({ backend: 'overlay', sources: [{ hostPath: join(repo, 'f.txt') }], allowedHostRoots: [repo] }),
    ).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(
      createSession({ backend: 'overlay', sources: [{ hostPath: repo }], allowedHostRoots: [repo], root: repo }),
    ).rejects.toMatchObject({ code: 'EINVAL' });
  });
});

describe('rollback across mounts', () => {
  const trees = hostTrees();
  const moveThenFail = defineTool({
    name: 'move_then_fail',
    description: 'Moves a directory from one mount to another, appends to a log, then fails',
    parameters: z.object({}),
    async handler(_args, { filesystem }) {
      await filesystem.rename('code/src', 'docs/src');
      await filesystem.write('code/main.ts', 'changed');
      throw new Error('the tool broke after moving');
    },
  });

  it('a failed call that moved files between two overlay mounts is undone in both', async () => {
    const allowed = trees.dir();
    const code = trees.tree({ 'src/a.ts': 'a', 'main.ts': 'm' }, join(allowed, 'code'));
    const docs = trees.tree({ 'guide.md': 'g' }, join(allowed, 'docs'));
    await using session = await createSession({
      backend: 'overlay',
      sources: [{ hostPath: code }, { hostPath: docs }],
      allowedHostRoots: [allowed],
    });
    const before = await contentsOf(session.filesystem);
    const failed = await session.runTool(moveThenFail, {});
    expect(failed).toMatchObject({ success: false, rolledBack: true });
    expect(await contentsOf(session.filesystem)).toEqual(before);
    expect(filesOf(code)).toEqual({ 'src/a.ts': 'file 100644 a', 'main.ts': 'file 100644 m' });
  });

  it('a composed workspace given to a session rolls back a cross-mount rename, and keeps an append-only log', async () => {
    const repo = createWorkspace(memoryDriver());
    await repo.write('src/a.ts', 'a');
    const other = createWorkspace(memoryDriver());
    const composed = createWorkspace(
      composeDriver({
        mounts: [
          { path: '/code', workspace: repo, access: 'read-write' },
          { path: '/docs', workspace: other, access: 'read-write' },
          { path: '/logs', access: 'append-only' },
        ],
      }),
    );
    await using session = await createSession({ workspace: composed });
    const logged = defineTool({
      name: 'log_then_fail',
      description: 'Logs, moves across mounts, then fails',
      parameters: z.object({}),
      async handler(_args, { filesystem }) {
        await filesystem.write('logs/run.log', 'tried\n', { mode: 'append' });
        await filesystem.rename('code/src', 'docs/src');
        throw new Error('broke');
      },
    });
    expect(await session.runTool(logged, {})).toMatchObject({ success: false, rolledBack: true });
    expect((await repo.read('src/a.ts')).content).toBe('a');
    expect(await other.list('/')).toEqual([]);
    expect((await composed.read('logs/run.log')).content).toBe('tried');
    await composed.dispose();
  });
});
