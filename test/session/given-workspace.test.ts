import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { kvDriver, type KvStore } from '../../examples/kv-backend.js';
import { unguardedWorkspace } from '../../src/session/call-view.js';
import { createSession, defineTool, type HydratedSession } from '../../src/session/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { contentsOf } from '../../src/testing/harness.js';
import { hostTrees } from '../support/backends.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

/** Edits the workspace, then fails (or not) the way `fail` says. */
const editTool = defineTool({
  name: 'edit_then_maybe_fail',
  description: 'Rewrites, creates and deletes files, then fails when asked',
  parameters: z.object({ fail: z.enum(['no', 'throw', 'result']) }),
  async handler({ fail }, { filesystem }) {
    await filesystem.write('src/index.ts', 'export const answer = 0;\n');
    await filesystem.writeBytes('new/blob.bin', new Uint8Array([0, 255, 1]));
    await filesystem.delete('docs', { recursive: true });
    await filesystem.mkdir('empty/dir');
    if (fail === 'throw') throw new Error('the tool broke');
    if (fail === 'result') return { success: false, message: 'the tool gave up' };
    return { success: true, message: 'edited' };
  },
});

async function seed(workspace: SnapshotableWorkspace): Promise<void> {
  await workspace.write('src/index.ts', 'export const answer = 42;\n');
  await workspace.write('docs/guide.md', '# Guide\n');
  await workspace.mkdir('docs/empty');
}

describe('createSession({ workspace }) over any backend (the key-value example)', () => {
  const host = hostTrees();
  const sessions: HydratedSession[] = [];
  const workspaces: SnapshotableWorkspace[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
    for (const workspace of workspaces.splice(0)) await workspace.dispose();
  });
  async function kv(store?: KvStore): Promise<SnapshotableWorkspace> {
    // The example's driver under this checkout's shared layer (its own helper imports the built package).
    const workspace = createWorkspace(kvDriver({ store }));
    workspaces.push(workspace);
    await seed(workspace);
    return workspace;
  }
  async function open(options: Parameters<typeof createSession>[0]): Promise<HydratedSession> {
    const session = await createSession(options);
    sessions.push(session);
    return session;
  }

  it('runs a tool on the given workspace, and rolls a failed one back exactly', async () => {
    const workspace = await kv();
    const session = await open({ workspace });
    expect(unguardedWorkspace(session.filesystem)).toBe(workspace);
    const before = await contentsOf(workspace);

    for (const fail of ['throw', 'result'] as const) {
      const failed = await session.runTool(editTool, { fail });
      expect(failed).toMatchObject({ success: false, rolledBack: true, code: 'ETOOL' });
      expect(await contentsOf(workspace)).toEqual(before);
    }

    const done = await session.runTool(editTool, { fail: 'no' });
    expect(done).toMatchObject({ success: true, rolledBack: false });
    expect(await workspace.read('src/index.ts')).toMatchObject({ content: 'export const answer = 0;' });
    expect(await workspace.exists('docs')).toBe(false);
    expect(session.snapshots.map((snapshot) => snapshot.backend)).toEqual(['kv', 'kv', 'kv']);

    await session.rollbackTo(session.snapshots[2]!);
    expect(await contentsOf(workspace)).toEqual(before);
  });

  it('leaves the workspace to its owner: dispose keeps it and its last state', async () => {
    const store: KvStore = new Map();
    const workspace = await kv(store);
    const session = await createSession({ workspace });
    await session.runTool(editTool, { fail: 'no' });
    await session.dispose();
    expect(await workspace.read('src/index.ts')).toMatchObject({ content: 'export const answer = 0;' });
    expect(store.has('new/blob.bin')).toBe(true);
  });

  it('reset() puts the workspace back as the session found it and hydrates the sources again', async () => {
    const source = host.tree({ 'readme.md': 'hello\n' });
    const workspace = await kv();
    const original = await contentsOf(workspace);
    const session = await open({ workspace, sources: [{ hostPath: source, path: 'mounted' }], allowedHostRoots: [source] });
    expect(session.hydration).toMatchObject({ files: 1 });
    const hydrated = await contentsOf(workspace);
    expect(hydrated).toEqual({ ...original, 'mounted/': '', 'mounted/readme.md': 'hello\n' });

    await session.runTool(editTool, { fail: 'no' });
    await workspace.write('outside.txt', 'written by the orchestrator');
    await session.reset();
    expect(unguardedWorkspace(session.filesystem)).toBe(workspace);
    expect(session.calls).toEqual([]);
    expect(await contentsOf(workspace)).toEqual(hydrated);
  });

  it('readOnly seals the given workspace after hydrating, and then refuses reset without changing anything', async () => {
    const workspace = await kv();
    const session = await open({ workspace, readOnly: true });
    expect(workspace.readOnly).toBe(true);
    const failed = await session.runTool(editTool, { fail: 'no' });
    expect(failed).toMatchObject({ success: false, code: 'EROFS', rolledBack: false });
    await expect(session.reset()).rejects.toMatchObject({ code: 'EINVAL', message: expect.stringContaining('cannot be reset') });
    expect(unguardedWorkspace(session.filesystem)).toBe(workspace);
  });

  it('a memory workspace built by the caller works the same way', async () => {
    const workspace = createWorkspace(memoryDriver());
    workspaces.push(workspace);
    await seed(workspace);
    const session = await open({ workspace });
    const before = await contentsOf(workspace);
    expect(await session.runTool(editTool, { fail: 'throw' })).toMatchObject({ rolledBack: true });
    expect(await contentsOf(workspace)).toEqual(before);
  });

  it('refuses a workspace together with backend or creation options, and anything that is not a workspace', async () => {
    const workspace = await kv();
    await expect(createSession({ workspace, backend: 'memory' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(createSession({ workspace, limits: { maxWriteBytes: 10 } })).rejects.toMatchObject({
      code: 'EINVAL',
      message: expect.stringContaining('limits'),
    });
    await expect(createSession({ workspace, root: '/tmp/x' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(createSession({ workspace: { read() {} } as never })).rejects.toMatchObject({
      code: 'EINVAL',
      message: expect.stringContaining('missing writeBytes'),
    });
    await expect(createSession({} as never)).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
