import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { WorkspaceSnapshotSchema } from '../../src/snapshots/record.js';
import { isoNow, nextSnapshotId } from '../../src/snapshots/stamp.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { assertBuilt, REPO } from '../cli/support.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const built = pathToFileURL(join(REPO, 'dist/src/snapshots/stamp.js')).href;

/**
 * Memory snapshot records are stamped by a counter and a per-process random prefix (src/snapshots/stamp.ts),
 * not a UUID and a fresh `toISOString` each: ids stay unique and UUID-shaped, times stay exact.
 */
describe('memory snapshot ids and times', () => {
  it('are unique across the workspaces of one process, UUID-shaped, and pass the record schema', async () => {
    const first = createWorkspace(memoryDriver());
    const second = createWorkspace(memoryDriver());
    const ids = new Set<string>();
    for (let i = 0; i < 500; i += 1) {
      for (const workspace of [first, second]) {
        const record = await workspace.snapshot();
        expect(record.id).toMatch(UUID_SHAPE);
        expect(WorkspaceSnapshotSchema.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
        ids.add(record.id);
      }
    }
    expect(ids.size).toBe(1000);
    await first.dispose();
    await second.dispose();
  });

  it('differ between processes: each draws its own random part (the built module, run twice)', () => {
    assertBuilt();
    const script = `import(${JSON.stringify(built)}).then((m) => console.log(m.nextSnapshotId(), m.nextSnapshotId()))`;
    const run = () => execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim().split(' ');
    const [a1, a2] = run();
    const [b1] = run();
    for (const id of [a1, a2, b1]) expect(id).toMatch(UUID_SHAPE);
    expect(a1).not.toBe(a2);
    expect(a1?.slice(0, 24)).toBe(a2?.slice(0, 24)); // one process: one random part, the counter apart
    expect(b1?.slice(0, 24)).not.toBe(a1?.slice(0, 24));
    expect(nextSnapshotId().slice(0, 24)).not.toBe(a1?.slice(0, 24));
  });

  it("stay unique in a fork, which holds its parent's records too", async () => {
    const parent = createWorkspace(memoryDriver());
    const taken = await parent.snapshot();
    const fork = await parent.fork();
    const ids = new Set([taken.id]);
    for (let i = 0; i < 50; i += 1) for (const workspace of [parent, fork]) ids.add((await workspace.snapshot()).id);
    expect(ids.size).toBe(101);
    await fork.restore(taken);
    await fork.dispose();
    await parent.dispose();
  });

  it('take the time of the snapshot, to the millisecond', async () => {
    const workspace = createWorkspace(memoryDriver());
    for (let i = 0; i < 20; i += 1) {
      const before = Date.now();
      const record = await workspace.snapshot();
      const after = Date.now();
      const taken = Date.parse(record.createdAt);
      expect(taken).toBeGreaterThanOrEqual(before);
      expect(taken).toBeLessThanOrEqual(after);
      await new Promise((resolve) => setTimeout(resolve, i % 3));
    }
    expect(isoNow()).toBe(new Date(Date.parse(isoNow())).toISOString());
    await workspace.dispose();
  });
});
