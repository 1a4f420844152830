import { describe, expect, it } from 'vitest';
import type { Progress } from '../workspace/progress.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../workspace/types.js';
import { contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

const FILES = 40;

/** A project of `FILES` files in a few directories, each holding `needle` on its second line. */
async function project(ws: SnapshotableWorkspace, version = 'one'): Promise<void> {
  for (let index = 0; index < FILES; index += 1) await ws.write(`src/d${index % 4}/f${index}.txt`, `${version}\nneedle ${index}\n`);
}

/**
 * Every long call of the protocol, on a workspace with a project and a snapshot of it taken before a change.
 * `patch` and `snapshotTree` only where the backend's snapshots can be read as trees.
 */
async function longCalls(ws: SnapshotableWorkspace, before: WorkspaceSnapshot) {
  const trees = await ws.snapshotTree().then(
    () => true,
    (error: { code?: string }) => error.code !== 'ESNAPSHOT',
  );
  const all = {
    snapshot: (options: object) => ws.snapshot(options),
    restore: (options: object) => ws.restore(before, options),
    diff: (options: object) => ws.diff(before, undefined, options),
    patch: (options: object) => ws.patch(before, undefined, options),
    snapshotTree: (options: object) => ws.snapshotTree(undefined, options),
    grep: (options: object) => ws.grep('needle', options),
    glob: (options: object) => ws.glob('**/*.txt', options),
  };
  if (!trees) return { ...all, patch: undefined, snapshotTree: undefined };
  return all;
}

/** Checks what every call's events promise: `done` never decreases, and the last event has `total === done`. */
function expectWellFormed(events: Progress[], call: string): void {
  expect(events.length, `${call}: at least the final event`).toBeGreaterThan(0);
  for (let index = 1; index < events.length; index += 1)
    expect((events[index] as Progress).done, `${call}: done never decreases`).toBeGreaterThanOrEqual((events[index - 1] as Progress).done);
  const last = events.at(-1) as Progress;
  expect(last.total, `${call}: the final event has total === done`).toBe(last.done);
  for (const event of events) if (event.path !== undefined) expect(event.path.startsWith('/') && event.path !== '/').toBe(false);
}

export function longCallRules(harness: ComplianceHarness): void {
  describe('long calls: signal and onProgress', () => {
    const create = workspaces(harness);

    async function prepared(): Promise<{ ws: SnapshotableWorkspace; before: WorkspaceSnapshot; changed: Record<string, string> }> {
      const ws = await create();
      await project(ws);
      const before = await ws.snapshot();
      await project(ws, 'two');
      await ws.write('added.txt', 'new\n');
      return { ws, before, changed: await contentsOf(ws) };
    }

    it('refuses every long call with ABORT_ERR when the signal is already aborted, changing nothing', async () => {
      const { ws, before, changed } = await prepared();
      const controller = new AbortController();
      controller.abort();
      for (const [name, call] of Object.entries(await longCalls(ws, before))) {
        if (call === undefined) continue;
        const events: Progress[] = [];
        await expectError(call({ signal: controller.signal, onProgress: (p: Progress) => events.push(p) }), 'AbortError', 'ABORT_ERR');
        expect(events, name).toEqual([]);
      }
      expect(await contentsOf(ws)).toEqual(changed);
    });

    it('rejects a signal or listener of the wrong type with EINVAL', async () => {
      const { ws, before } = await prepared();
      for (const call of Object.values(await longCalls(ws, before))) {
        if (call === undefined) continue;
        await expectError(call({ signal: 'stop' }), 'InvalidArgumentError', 'EINVAL');
        await expectError(call({ onProgress: 42 }), 'InvalidArgumentError', 'EINVAL');
      }
    });

    it('reports increasing progress and a final event with total === done on every long call', async () => {
      const { ws, before } = await prepared();
      const calls = await longCalls(ws, before);
      for (const name of ['snapshot', 'diff', 'patch', 'snapshotTree', 'grep', 'glob', 'restore'] as const) {
        const events: Progress[] = [];
        const call = calls[name];
        if (call === undefined) continue;
        await call({ onProgress: (p: Progress) => events.push({ ...p }) });
        expectWellFormed(events, name);
      }
    });

    it('counts walked entries and searched files in grep and glob, naming workspace paths', async () => {
      const { ws } = await prepared();
      const events: Progress[] = [];
      const matches = await ws.grep('needle', { onProgress: (p) => events.push({ ...p }) });
      expect(matches).toHaveLength(FILES);
      expect(new Set(events.map((event) => event.phase))).toEqual(new Set(['walk', 'search']));
      const searched = events.filter((event) => event.phase === 'search' && event.path !== undefined).map((event) => event.path);
      expect(searched).toContain('src/d1/f1.txt');
      expect((events.at(-1) as Progress).done).toBeGreaterThanOrEqual(2 * FILES);
      const globbed: Progress[] = [];
      await ws.glob('**/*.txt', { onProgress: (p) => globbed.push({ ...p }) });
      expect(globbed.filter((event) => event.phase === 'walk').length).toBeGreaterThanOrEqual(FILES);
    });

    it('stops grep and glob with ABORT_ERR when the signal aborts during the walk', async () => {
      const { ws } = await prepared();
      for (const search of [(o: object) => ws.grep('needle', o), (o: object) => ws.glob('**/*.txt', o)]) {
        const controller = new AbortController();
        let after = 0;
        const onProgress = (): void => {
          if (controller.signal.aborted) after += 1;
          controller.abort();
        };
        await expectError(search({ signal: controller.signal, onProgress }), 'AbortError', 'ABORT_ERR');
        expect(after, 'no event after the abort was seen').toBe(0);
      }
    });

    it('fails a call with the error its listener throws', async () => {
      const { ws } = await prepared();
      const boom = new Error('listener failed');
      for (const call of [
        () =>
          ws.grep('needle', {
            onProgress: () => {
              throw boom;
            },
          }),
        () =>
          ws.glob('**', {
            onProgress: () => {
              throw boom;
            },
          }),
      ])
        await expect(call()).rejects.toBe(boom);
    });

    it('a snapshot aborted part way throws ABORT_ERR (or completes when its work was already done) and changes nothing', async () => {
      const { ws, changed } = await prepared();
      const controller = new AbortController();
      const outcome = await ws.snapshot({ signal: controller.signal, onProgress: () => controller.abort() }).then(
        (record) => ({ record }),
        (error: unknown) => ({ error }),
      );
      if ('error' in outcome) expect((outcome.error as { code?: string }).code).toBe('ABORT_ERR');
      expect(await contentsOf(ws)).toEqual(changed);
      const later = await ws.snapshot();
      await ws.write('after.txt', 'x');
      await ws.restore(later);
      expect(await contentsOf(ws)).toEqual(changed);
    });

    it('a restore aborted part way leaves the workspace exactly as before (ABORT_ERR) or exactly at the snapshot', async () => {
      const { ws, before, changed } = await prepared();
      const target = await (async () => {
        const probe = await ws.snapshot();
        await ws.restore(before);
        const wanted = await contentsOf(ws);
        await ws.restore(probe);
        return wanted;
      })();
      expect(await contentsOf(ws)).toEqual(changed);
      for (const abortAt of [1, 5, 20, 60]) {
        const controller = new AbortController();
        let seen = 0;
        const onProgress = (): void => {
          seen += 1;
          if (seen === abortAt) controller.abort();
        };
        const current = await ws.snapshot();
        const outcome = await ws.restore(before, { signal: controller.signal, onProgress }).then(
          () => 'restored',
          (error: unknown) => (error as { code?: string }).code,
        );
        if (outcome === 'ABORT_ERR') expect(await contentsOf(ws), `aborted at event ${abortAt}`).toEqual(changed);
        else {
          expect(outcome).toBe('restored');
          expect(await contentsOf(ws), `completed after event ${abortAt}`).toEqual(target);
          await ws.restore(current);
        }
      }
    });
  });
}
