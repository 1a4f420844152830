import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localSessionStore } from '../../src/store/local-store.js';
import { createSession, type RemoteSession } from '../../src/session/index.js';
import { markReachable } from '../../src/store/reachable.js';
import { assertBuilt } from '../cli/support.js';
import { digestOf } from './digest.mjs';

const CHILD = fileURLToPath(new URL('./local-child.mjs', import.meta.url));
const FILES = 20;
const SEEDS = 20;

/** Runs the child; resolves with its stdout lines and how it ended (a SIGKILL is an expected end). */
function child(args: string[]): Promise<{ lines: string[]; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, ...args], (error, stdout, stderr) => {
      const signal = (error as { signal?: NodeJS.Signals } | null)?.signal ?? null;
      if (error !== null && signal !== 'SIGKILL') reject(new Error(stderr));
      else resolve({ lines: stdout.trim().split('\n'), signal });
    });
  });
}

/**
 * The seed-th of SEEDS kill points spread over [1, count]: one in each of SEEDS equal strata, placed within
 * it by the seed (the same seed kills at the same write on every run); the last one after the head moved.
 */
const pointOf = (seed: number, count: number): number => {
  if (seed === SEEDS) return count; // the lock's release, after the head moved
  const jitter = (((seed * 2654435761) >>> 0) % 1000) / 1000;
  return Math.min(count, 1 + Math.floor(((seed - 1 + jitter) * count) / SEEDS));
};

describe('localSessionStore: kill -9 in the middle of a publish', () => {
  let base: string;
  let pristine: string;
  let oldDigest: string;
  let newDigest: string;
  let writes: number;
  beforeAll(async () => {
    assertBuilt();
    base = mkdtempSync(join(tmpdir(), 'sessionfs-local-crash-'));
    pristine = join(base, 'pristine');
    const session = await createSession({ store: localSessionStore({ dir: pristine }), sessionId: 'k' });
    await session.filesystem.write('/base.txt', 'base');
    oldDigest = await digestOf(session.filesystem);
    await session.dispose();
    const dry = join(base, 'dry');
    cpSync(pristine, dry, { recursive: true });
    const { lines } = await child([dry, 'k', 'publish-kill', '0', String(FILES), '-1']);
    newDigest = lines[0] as string;
    writes = Number(lines[1]?.replace('published ', ''));
    expect(writes).toBeGreaterThan(FILES * 3);
  }, 60_000);
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it(`leaves the old head or the new at ${SEEDS} seeded points, every blob a head names intact, and the session writable`, async () => {
    const outcomes: string[] = [];
    const one = async (seed: number): Promise<void> => {
      const dir = join(base, `seed-${seed}`);
      cpSync(pristine, dir, { recursive: true });
      const point = pointOf(seed, writes);
      const { signal, lines } = await child([dir, 'k', 'publish-kill', '0', String(FILES), String(point)]);
      // A lease renewal may add writes to a run: the last point can fall after the publish finished.
      if (signal === null) expect(lines.at(-1)).toMatch(/^published/);
      const store = localSessionStore({ dir });
      const head = await store.head('k');
      expect([1, 2]).toContain(head?.version);
      // fsck: every blob every head names is stored and hashes to its name.
      const reachable = new Set<string>();
      for (const { root } of await store.listSessions()) if (root !== undefined) await markReachable(store.blobs, root, reachable);
      for (const hash of reachable) expect(await store.blobs.get(hash), `blob ${hash} at point ${point}`).toBeDefined();
      const view = await createSession({ store, sessionId: 'k', readOnly: true });
      expect(await digestOf(view.filesystem)).toBe(head?.version === 1 ? oldDigest : newDigest);
      await view.dispose();
      // The killed owner's lease passes at once (its process is gone) and any lock it held goes stale (5 s); then a new writer carries on.
      let writer: RemoteSession | undefined;
      for (let attempt = 0; writer === undefined; attempt += 1) {
        writer = await createSession({ store, sessionId: 'k' }).catch((error: { code?: string }) => {
          if (error.code !== 'ECONFLICT' || attempt > 40) throw error;
          return new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 200));
        });
      }
      await writer.filesystem.write('/after.txt', 'after');
      expect(await writer.publish()).toBe((head?.version ?? 0) + 1);
      await writer.dispose();
      await store.gc({ graceMs: 0 }); // sweeps what the killed publish left, never what a head names
      const after = await createSession({ store, sessionId: 'k', readOnly: true });
      expect((await after.filesystem.read('/after.txt')).content).toBe('after');
      await after.dispose();
      outcomes.push(`${point}:${head?.version === 1 ? 'old' : 'new'}`);
    };
    for (let seed = 1; seed <= SEEDS; seed += 4) await Promise.all([0, 1, 2, 3].map((offset) => one(seed + offset)));
    expect(outcomes).toHaveLength(SEEDS);
    expect(outcomes.some((outcome) => outcome.endsWith('new'))).toBe(true);
    console.log(`kill points out of ${writes} writes: ${outcomes.sort((a, b) => Number.parseInt(a) - Number.parseInt(b)).join(' ')}`);
  }, 240_000);
});
