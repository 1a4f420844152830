import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSession, defineTool, type CreateSessionOptions, type HydratedSession } from '../../src/session/index.js';
import { SnapshotRestoreError } from '../../src/workspace/errors.js';
import type { WorkspaceSnapshot } from '../../src/workspace/types.js';
import { gitEnv } from '../host/support.js';
import { contentsOf } from '../../src/testing/harness.js';
import { hostTrees } from '../support/backends.js';
import { createWorkspace, type ManagedWorkspace } from '../../src/workspace/create-workspace.js';
import { composeDriver } from '../../src/compose/index.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

/** Writes `content` at `path`. */
const writeTool = defineTool({
  name: 'write',
  description: 'writes a file',
  parameters: z.object({ path: z.string(), content: z.string() }),
  async handler({ path, content }, { filesystem }) {
    await filesystem.write(path, content);
    return { success: true, message: 'written' };
  },
});

async function failure(action: Promise<unknown>): Promise<unknown> {
  return action.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const sessions: HydratedSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.dispose();
});

describe.each(['memory', 'host', 'overlay'] as const)('session retention on %s', (backend) => {
  const trees = hostTrees();
  /** The overlay backend shows host directories: an empty one mounted at the root. */
  const where = (): Partial<CreateSessionOptions> => {
    if (backend !== 'overlay') return {};
    const empty = trees.dir();
    return { sources: [{ hostPath: empty, path: '/' }], allowedHostRoots: [empty] };
  };

  it('keeps the newest history entries and snapshots; a released snapshot is refused by name', async () => {
    const session = await createSession({ backend, ...where(), retention: { maxHistory: 5, maxSnapshots: 3 } });
    sessions.push(session);
    const taken = [];
    for (let i = 0; i < 12; i += 1) {
      await session.runTool(writeTool, { path: 'f.txt', content: `v${i}` });
      taken.push(session.snapshots.at(-1)!);
    }
    expect(session.calls.map((entry) => (entry.params as { content: string }).content)).toEqual(['v7', 'v8', 'v9', 'v10', 'v11']);
    expect(session.snapshots).toEqual(taken.slice(-3));

    // The snapshot before call 9 (which wrote v9) holds v8.
    await session.rollbackTo(session.snapshots[0]!);
    expect(await contentsOf(session.filesystem)).toEqual({ 'f.txt': 'v8' });
    const released = taken[2]!;
    const error = await failure(session.rollbackTo(released));
    expect(error).toBeInstanceOf(SnapshotRestoreError);
    expect((error as Error).message).toContain(released.id);
    expect((error as Error).message).toMatch(/released|retention/);
    expect(await contentsOf(session.filesystem)).toEqual({ 'f.txt': 'v8' });
  });

  it('refuses bad retention settings with a typed error', async () => {
    for (const retention of [{ maxHistory: 0 }, { maxSnapshots: 1.5 }, { maxSnapshots: -1 }, { maxHistory: '3' }, 'all']) {
      const error = await failure(createSession({ backend, ...where(), retention: retention as never }));
      expect(error).toMatchObject({ code: 'EINVAL' });
    }
  });
});

describe('host retention releases storage', () => {
  const trees = hostTrees();
  /** A git dir of its own (outside any root), removed after the tests. */
  const scratchGitDir = (): string => join(trees.dir(), 'git');
  /** Bytes and objects in a git dir: loose objects plus every pack. */
  function storage(gitDir: string): { bytes: number; objects: number } {
    let bytes = 0;
    let objects = 0;
    const objectsDir = join(gitDir, 'objects');
    for (const dir of fs.readdirSync(objectsDir)) {
      if (/^[0-9a-f]{2}$/.test(dir)) {
        for (const name of fs.readdirSync(join(objectsDir, dir))) {
          bytes += fs.statSync(join(objectsDir, dir, name)).size;
          objects += 1;
        }
      }
    }
    const packDir = join(objectsDir, 'pack');
    for (const name of fs.readdirSync(packDir)) {
      bytes += fs.statSync(join(packDir, name)).size;
      if (name.endsWith('.idx')) objects += fs.readFileSync(join(packDir, name)).readUInt32BE(8 + 255 * 4);
    }
    return { bytes, objects };
  }

  async function run(maxSnapshots: number): Promise<{ session: HydratedSession; gitDir: string }> {
    const gitDir = scratchGitDir();
    const session = await createSession({ backend: 'host', gitDir, retention: { maxSnapshots } });
    sessions.push(session);
    await session.filesystem.write('stable.txt', 'never changes');
    for (let i = 0; i < 40; i += 1) {
      // Incompressible, so the sizes say how many versions are stored.
      await session.runTool(writeTool, { path: `big${i % 3}.bin`, content: randomBytes(32 * 1024).toString('base64') });
    }
    return { session, gitDir };
  }

  it('drops the refs and removes objects nothing reaches: git dir size and object count go down', async () => {
    const unbounded = await run(Infinity);
    const bounded = await run(3);
    const all = storage(unbounded.gitDir);
    const kept = storage(bounded.gitDir);
    expect(kept.objects).toBeLessThan(all.objects / 3);
    expect(kept.bytes).toBeLessThan(all.bytes / 3);
    // The calls' snapshots, and as many states of the history's (session.history(): what undo and blame read).
    expect(fs.readdirSync(join(bounded.gitDir, 'refs', 'sessionfs')).length).toBeLessThanOrEqual(3 + 3);

    // What is kept is whole: every kept snapshot restores, and the live state snapshots and restores exactly.
    const session = bounded.session;
    const live = await contentsOf(session.filesystem);
    const end = await session.filesystem.snapshot();
    for (const snapshot of session.snapshots) {
      await session.rollbackTo(snapshot);
      expect(Object.keys(await contentsOf(session.filesystem))).toEqual(['big0.bin', 'big1.bin', 'big2.bin', 'stable.txt']);
    }
    await session.rollbackTo(end);
    expect(await contentsOf(session.filesystem)).toEqual(live);
    await session.runTool(writeTool, { path: 'after.txt', content: 'after' });
    await session.rollbackTo(session.snapshots.at(-1)!);
    expect(await contentsOf(session.filesystem)).toEqual(live);

    try {
      execFileSync('git', ['--git-dir', bounded.gitDir, 'fsck', '--full', '--no-dangling'], { env: gitEnv, stdio: 'pipe' });
    } catch (error) {
      const e = error as { code?: string; stderr?: Buffer };
      if (e.code === 'ENOENT') console.log('git not installed: fsck skipped');
      else throw new Error(`git fsck failed: ${e.stderr?.toString()}`);
    }
  });

  it('another workspace on the same git dir hashes everything again after a prune, so its snapshots stay whole', async () => {
    const { session, gitDir } = await run(3);
    const other = createWorkspace(hostDriver({ gitDir }));
    try {
      await other.write('mine.txt', 'other workspace');
      const first = await other.snapshot();
      // Captured into the other workspace's cache (a diff hashes the live state) but reached by no ref.
      await other.write('cache-only.txt', 'only in the cache');
      // Older than a timestamp tick when hashed, so the cache trusts it from then on (it is not "racy").
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await other.diff(first)).toEqual([{ path: 'cache-only.txt', status: 'added' }]);
      // The session prunes again: the objects only the other workspace's cache names go.
      for (let i = 0; i < 12; i += 1) await session.runTool(writeTool, { path: 'x.txt', content: `x${i}` });
      const second = await other.snapshot();
      await other.write('cache-only.txt', 'changed');
      await other.restore(second);
      expect(await contentsOf(other)).toEqual({ 'mine.txt': 'other workspace', 'cache-only.txt': 'only in the cache' });
    } finally {
      await other.dispose();
    }
  });

  it('never prunes a git dir a fork borrows from: the fork still restores what it inherited', async () => {
    const { session } = await run(3);
    const inherited = session.snapshots[0]!;
    const fork = await (session.filesystem as unknown as ManagedWorkspace).fork();
    try {
      // The parent releases (and would prune) the snapshot the fork still holds a ref to.
      for (let i = 0; i < 12; i += 1) await session.runTool(writeTool, { path: 'x.txt', content: `x${i}` });
      await expect(session.rollbackTo(inherited)).rejects.toBeInstanceOf(SnapshotRestoreError);
      await fork.restore(inherited);
      expect(Object.keys(await contentsOf(fork))).toEqual(['big0.bin', 'big1.bin', 'big2.bin', 'stable.txt']);
    } finally {
      await fork.dispose();
    }
  });
});

describe('composed retention releases what each mount holds', () => {
  it("drops the host mount's refs and the memory mount's records; a released snapshot is refused by name", async () => {
    const hostFiles = hostDriver();
    const host = createWorkspace(hostFiles);
    const memory = createWorkspace(memoryDriver());
    // What the composition asks the memory mount to keep, seen from outside.
    const memoryRecords: WorkspaceSnapshot[] = [];
    const snapshot = memory.snapshot.bind(memory);
    memory.snapshot = async (options) => {
      const record = await snapshot(options);
      memoryRecords.push(record);
      return record;
    };
    const composed = createWorkspace(
      composeDriver({
        mounts: [
          { path: '/h', workspace: host, access: 'read-write' },
          { path: '/m', workspace: memory, access: 'read-write' },
        ],
      }),
    );
    const refs = (): string[] => fs.readdirSync(join(hostFiles.gitDir, 'refs', 'sessionfs'));
    try {
      const session = await createSession({ workspace: composed, retention: { maxSnapshots: 3 } });
      sessions.push(session);
      const baseline = refs().length; // the session's own baseline, never released
      const taken = [];
      for (let i = 0; i < 15; i += 1) {
        await session.runTool(writeTool, { path: `h/f${i % 2}.txt`, content: `host ${i}` });
        await session.runTool(writeTool, { path: 'm/f.txt', content: `memory ${i}` });
        taken.push(session.snapshots.at(-1)!);
      }
      expect(session.snapshots).toHaveLength(3);
      // The calls' snapshots, and as many states of the history's.
      expect(refs()).toHaveLength(baseline + 3 + 3);
      // The memory mount's oldest record was released there; its newest still restores.
      // (memoryRecords[0] belongs to the session's baseline.)
      await expect(memory.restore(memoryRecords[1]!)).rejects.toThrow(/released/);
      await memory.restore(memoryRecords.at(-1)!);

      const released = taken[0]!;
      const error = await failure(session.rollbackTo(released));
      expect(error).toBeInstanceOf(SnapshotRestoreError);
      expect((error as Error).message).toContain(released.id);
      expect((error as Error).message).toMatch(/released/);

      // A kept snapshot restores every mount, and the snapshots the restore took to undo a failure are let go.
      await session.rollbackTo(session.snapshots[0]!);
      expect(await contentsOf(session.filesystem)).toEqual({
        'h/': '',
        'h/f0.txt': 'host 12',
        'h/f1.txt': 'host 13',
        'm/': '',
        'm/f.txt': 'memory 12',
      });
      // The calls' snapshots, and as many states of the history's.
      expect(refs()).toHaveLength(baseline + 3 + 3);
      // (The untagged ones: the history's are tagged and kept.)
      await expect(memory.restore(memoryRecords.filter((record) => record.tag === undefined).at(-1)!)).rejects.toThrow(/released/);
    } finally {
      await composed.dispose();
    }
  });
});
