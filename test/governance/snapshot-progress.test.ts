import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentsOf, expectError } from '../../src/testing/harness.js';
import { LongCall, type Progress } from '../../src/workspace/progress.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { backendNamed, disposing } from '../support/backends.js';
import { composeDriver } from '../../src/compose/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

const FILES = 40;

async function project(ws: SnapshotableWorkspace, version: string, base = ''): Promise<void> {
  for (let i = 0; i < FILES; i += 1) await ws.write(`${base}src/d${i % 4}/f${i}.txt`, `${version} ${i}\n`);
}

/** Every event of one call, checked for what every call promises: `done` never decreases, the last has total === done. */
function recorder(): { events: Progress[]; onProgress: (event: Progress) => void; phase(name: string): Progress[] } {
  const events: Progress[] = [];
  return {
    events,
    onProgress: (event) => {
      const previous = events.at(-1);
      if (previous !== undefined) expect(event.done).toBeGreaterThanOrEqual(previous.done);
      if (event.path !== undefined) expect(event.path.startsWith('/')).toBe(false);
      events.push({ ...event });
    },
    // The units of a phase (events that name a path; the others only move the count).
    phase: (name) => events.filter((event) => event.phase === name && event.path !== undefined),
  };
}

const finalOf = (events: Progress[]): Progress => {
  const last = events.at(-1) as Progress;
  expect(last.total).toBe(last.done);
  return last;
};

// Every unit reported (the rate bound has its own test below).
let interval = LongCall.intervalMs;
beforeEach(() => {
  interval = LongCall.intervalMs;
  LongCall.intervalMs = 0;
});
afterEach(() => {
  LongCall.intervalMs = interval;
});

/** The backends whose snapshots walk the files (host, and a composition over it); memory's are O(1). */
describe.each(['host', 'compose over host', 'memory', 'compose over memory'])('snapshot and restore progress on %s', (name) => {
  const { create } = disposing(backendNamed(name));
  const walks = name.includes('host');

  it('a snapshot reports each entry it scans; a restore each entry it writes or removes', async () => {
    const ws = create();
    await project(ws, 'one');
    const taken = recorder();
    const before = await ws.snapshot({ onProgress: taken.onProgress });
    const scanned = taken.phase('scan').map((event) => event.path);
    if (walks) {
      // 40 files and 5 directories, each a unit, in order.
      expect(scanned).toContain('src/d1/f1.txt');
      expect(finalOf(taken.events).done).toBeGreaterThanOrEqual(FILES + 5);
    } else expect(taken.events.every((event) => event.done === 0 && event.path === undefined)).toBe(true);
    finalOf(taken.events);

    await project(ws, 'two');
    await ws.write('added.txt', 'new\n');
    const restored = recorder();
    await ws.restore(before, { onProgress: restored.onProgress });
    if (walks) {
      const applied = restored.phase('apply').map((event) => event.path);
      expect(applied).toContain('added.txt');
      expect(applied).toContain('src/d3/f3.txt');
      expect(applied.length).toBe(FILES + 1);
    }
    finalOf(restored.events);
  });

  it('a snapshot aborted mid-way throws ABORT_ERR; the next snapshot and restore are exact', async () => {
    const ws = create();
    await project(ws, 'one');
    const first = await ws.snapshot();
    await project(ws, 'two');
    const controller = new AbortController();
    let seen = 0;
    const outcome = await ws
      .snapshot({ signal: controller.signal, onProgress: () => (++seen === 10 ? controller.abort() : undefined) })
      .then(
        () => 'taken',
        (error: { code?: string }) => error.code,
      );
    expect(outcome).toBe(walks ? 'ABORT_ERR' : 'taken');
    if (walks) expect(seen).toBe(10);
    const two = await contentsOf(ws);
    const second = await ws.snapshot();
    await ws.restore(first);
    expect(Object.values(await contentsOf(ws)).filter((text) => text.startsWith('one'))).toHaveLength(FILES);
    await ws.restore(second);
    expect(await contentsOf(ws)).toEqual(two);
  });

  it('a restore aborted while it scans changes nothing (ABORT_ERR); one aborted while it writes completes', async () => {
    const ws = create();
    await project(ws, 'one');
    const one = await contentsOf(ws);
    const before = await ws.snapshot();
    await project(ws, 'two');
    const two = await contentsOf(ws);
    const current = await ws.snapshot();
    for (const stopIn of ['scan', 'apply']) {
      const controller = new AbortController();
      const onProgress = (event: Progress): void => (event.phase === stopIn ? controller.abort() : undefined);
      const outcome = await ws.restore(before, { signal: controller.signal, onProgress }).then(
        () => 'restored',
        (error: { code?: string }) => error.code,
      );
      if (!walks) {
        expect(outcome).toBe('restored');
        await ws.restore(current);
        continue;
      }
      expect(outcome, `aborted in ${stopIn}`).toBe(stopIn === 'scan' ? 'ABORT_ERR' : 'restored');
      expect(await contentsOf(ws)).toEqual(stopIn === 'scan' ? two : one);
    }
  });
});

describe('an abort from outside the listener', () => {
  const { create } = disposing(backendNamed('host'));

  it('stops a host snapshot part way: the scan gives the event loop turns, and the next entry sees the abort', async () => {
    const ws = create();
    for (let i = 0; i < 1500; i += 1) await ws.write(`big/d${i % 30}/f${i}.txt`, `${i}\n`.repeat(50));
    const controller = new AbortController();
    let scanned = 0;
    const onProgress = (event: Progress): void => {
      // Not from inside the listener: on a later turn of the event loop, as a timer or a request would.
      if (scanned === 0 && event.phase === 'scan') setImmediate(() => controller.abort());
      scanned = event.done;
    };
    await expectError(ws.snapshot({ signal: controller.signal, onProgress }), 'AbortError', 'ABORT_ERR');
    expect(scanned).toBeGreaterThan(0);
    expect(scanned).toBeLessThan(1500);
    // The stat cache kept what the scan learned: the next snapshot is whole and restores exactly.
    const whole = await ws.snapshot();
    const before = await contentsOf(ws);
    await ws.write('big/d0/f0.txt', 'changed');
    await ws.restore(whole);
    expect(await contentsOf(ws)).toEqual(before);
  });
});

describe('progress of a composition names composed paths, and an aborted restore puts every mount back', () => {
  const created: SnapshotableWorkspace[] = [];
  afterEach(async () => {
    for (const ws of created.splice(0)) await ws.dispose();
  });

  it('reports a host mount at /work as work/..., and rolls back the memory mount restored before the abort', async () => {
    const host = createWorkspace(hostDriver());
    const composed = createWorkspace(
      composeDriver({
        mounts: [
          { path: '/', workspace: createWorkspace(memoryDriver()), access: 'read-write' },
          { path: '/work', workspace: host, access: 'read-write' },
        ],
      }),
    );
    created.push(composed, host);
    await project(composed, 'one');
    await project(composed, 'one', 'work/');
    const taken = recorder();
    const before = await composed.snapshot({ onProgress: taken.onProgress });
    expect(taken.phase('scan').map((event) => event.path)).toContain('work/src/d1/f1.txt');
    finalOf(taken.events);

    await project(composed, 'two');
    await project(composed, 'two', 'work/');
    const two = await contentsOf(composed);
    const controller = new AbortController();
    // The memory mount at / is restored first; the host mount's scan then sees the abort.
    const onProgress = (event: Progress): void => (event.phase === 'scan' ? controller.abort() : undefined);
    await expectError(composed.restore(before, { signal: controller.signal, onProgress }), 'AbortError', 'ABORT_ERR');
    expect(await contentsOf(composed)).toEqual(two);

    const restored = recorder();
    await composed.restore(before, { onProgress: restored.onProgress });
    expect(restored.phase('apply').map((event) => event.path)).toContain('work/src/d2/f2.txt');
    const files = Object.entries(await contentsOf(composed)).filter(([path]) => !path.endsWith('/'));
    expect(files.map(([, text]) => text.split(' ')[0])).toEqual(Array(2 * FILES).fill('one'));
  });
});

describe.each(['host', 'kv (third-party driver)'])('the rate of unit events on %s', (name) => {
  const { create } = disposing(backendNamed(name));

  it('is bounded: a snapshot of hundreds of files sends a handful of events, with every unit counted', async () => {
    LongCall.intervalMs = 50;
    const ws = create();
    for (let i = 0; i < 300; i += 1) await ws.write(`many/d${i % 10}/f${i}.txt`, `${i}\n`);
    const taken = recorder();
    const started = performance.now();
    await ws.snapshot({ onProgress: taken.onProgress });
    const elapsed = performance.now() - started;
    const last = finalOf(taken.events);
    expect(last.done).toBeGreaterThanOrEqual(300);
    expect(taken.events.length).toBeGreaterThanOrEqual(2);
    expect(taken.events.length).toBeLessThanOrEqual(3 + Math.ceil(elapsed / 50));
  });
});
