import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createSession, defineTool } from '../../src/session/index.js';
import type { HydratedSession, ToolContext } from '../../src/session/index.js';
import { contentsOf } from '../../src/testing/harness.js';
import { SESSION_BACKENDS } from '../support/backends.js';

/** A tool that runs `steps` against its filesystem, then fails (or throws, or hangs until aborted). */
type Step = (fs: ToolContext['filesystem']) => Promise<unknown>;
const steps = new Map<string, Step[]>();
const scripted = defineTool({
  name: 'scripted',
  parameters: z.object({ script: z.string(), end: z.enum(['fail', 'throw', 'succeed', 'hang']) }),
  description: 'runs a test script',
  async handler({ script, end }, { filesystem, signal }) {
    for (const step of steps.get(script) ?? []) await step(filesystem);
    if (end === 'throw') throw new Error('boom');
    if (end === 'hang') await new Promise((resolve) => signal?.addEventListener('abort', resolve));
    return { success: end === 'succeed', message: end };
  },
});

describe.each(SESSION_BACKENDS)("rollback: 'journal' on $name", ({ session: backend }) => {
  const sessions: HydratedSession[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
    steps.clear();
  });
  async function open(): Promise<HydratedSession> {
    const session = await createSession({ backend, rollback: 'journal' });
    sessions.push(session);
    const fs = session.filesystem;
    await fs.write('keep.txt', 'original\n');
    await fs.mkdir('dir/sub', { parents: true });
    await fs.write('dir/sub/deep.txt', 'deep\n');
    await fs.writeBytes('bin.dat', new Uint8Array([0, 1, 2, 255]));
    return session;
  }
  async function run(session: HydratedSession, script: Step[], end: 'fail' | 'throw' | 'succeed' = 'fail') {
    const name = String(steps.size);
    steps.set(name, script);
    return session.runTool(scripted, { script: name, end });
  }

  it('undoes writes over files, new files and the directories they created, with no snapshot', async () => {
    const session = await open();
    const before = await contentsOf(session.filesystem);
    const result = await run(session, [
      (fs) => fs.write('keep.txt', 'changed\n'),
      (fs) => fs.write('keep.txt', 'changed twice\n'),
      (fs) => fs.writeBytes('bin.dat', new Uint8Array([9])),
      (fs) => fs.write('new/a/b/c.txt', 'created\n'),
      (fs) => fs.mkdir('made/here', { parents: true }),
      (fs) => fs.write('dir/sub/other.txt', 'x'),
    ]);
    expect(result).toMatchObject({ success: false, rolledBack: true });
    expect(await contentsOf(session.filesystem)).toEqual(before);
    expect(session.snapshots).toEqual([]);
  });

  it('keeps what a successful call did, and rolls back a throwing one', async () => {
    const session = await open();
    expect(await run(session, [(fs) => fs.write('keep.txt', 'kept\n')], 'succeed')).toMatchObject({ success: true });
    const before = await contentsOf(session.filesystem);
    expect(before['keep.txt']).toBe('kept\n');
    expect(await run(session, [(fs) => fs.write('keep.txt', 'lost\n')], 'throw')).toMatchObject({ rolledBack: true });
    expect(await contentsOf(session.filesystem)).toEqual(before);
  });

  it('stays exact when a handler writes one path concurrently', async () => {
    const session = await open();
    const before = await contentsOf(session.filesystem);
    await run(session, [(fs) => Promise.all(['1', '2', '3', '4'].map((n) => fs.write('keep.txt', n)))]);
    expect(await contentsOf(session.filesystem)).toEqual(before);
  });

  it('takes one snapshot for a change it cannot record (delete, rename, copy), and undoes the records around it', async () => {
    const session = await open();
    const before = await contentsOf(session.filesystem);
    await run(session, [
      (fs) => fs.write('keep.txt', 'first\n'),
      (fs) => fs.delete('dir', { recursive: true }),
      (fs) => fs.write('keep.txt', 'second\n'),
      (fs) => fs.rename('keep.txt', 'moved.txt'),
      (fs) => fs.copy('bin.dat', 'copy.dat'),
      (fs) => fs.write('dir/again.txt', 'x'),
    ]);
    expect(await contentsOf(session.filesystem)).toEqual(before);
    expect(session.snapshots).toHaveLength(1);
    expect(session.calls.at(-1)?.snapshot).toBe(session.snapshots[0]);
  });

  it('stays exact for random sequences of changes', async () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const paths = ['keep.txt', 'bin.dat', 'dir/sub/deep.txt', 'dir/x.txt', 'n/m/o.txt', 'n/p.txt', 'dir/sub'];
    const session = await open();
    for (let round = 0; round < 12; round += 1) {
      const before = await contentsOf(session.filesystem);
      const script: Step[] = [];
      for (let i = 0; i < 6; i += 1) {
        const path = paths[random(paths.length)] as string;
        const other = paths[random(paths.length)] as string;
        const op = random(5);
        script.push((fs) => {
          if (op === 0) return fs.write(path, `r${round}-${i}`);
          if (op === 1) return fs.mkdir(path, { parents: true });
          if (op === 2) return fs.delete(path, { recursive: true });
          if (op === 3) return fs.rename(path, other);
          return fs.write(path, `${i}`, { mode: 'append' });
        });
      }
      const tolerant = script.map(
        (step): Step =>
          (fs) =>
            step(fs).catch(() => undefined),
      );
      await run(session, tolerant);
      expect(await contentsOf(session.filesystem), `round ${round}`).toEqual(before);
      // Move on from a state the successful half of the script leaves.
      await run(session, tolerant.slice(0, 3), 'succeed');
    }
  });

  it('rolls back a call aborted while it runs', async () => {
    const session = await open();
    const before = await contentsOf(session.filesystem);
    steps.set('hang', [(fs) => fs.write('keep.txt', 'during\n'), (fs) => fs.write('fresh/file.txt', 'x')]);
    const controller = new AbortController();
    const running = session.runTool(scripted, { script: 'hang', end: 'hang' }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    expect(await running).toMatchObject({ success: false, code: 'ABORT_ERR', rolledBack: true });
    expect(await contentsOf(session.filesystem)).toEqual(before);
  });

  if (backend === 'host') {
    it('takes a snapshot before a tool that reaches beyond its view (openWorldHint), and rolls back what it did', async () => {
      const session = await open();
      const before = await contentsOf(session.filesystem);
      const direct = defineTool({
        name: 'direct',
        parameters: z.object({}),
        description: 'writes into the root with node:fs, as the host shell runs programs there',
        annotations: { readOnlyHint: false, openWorldHint: true },
        handler: (_params, { filesystem }) => {
          writeFileSync(join(filesystem.root as string, 'keep.txt'), 'written behind the view\n');
          // As the host shell does: the session's temp root trusts its own dirty set (changeDetection 'tracked').
          (filesystem as unknown as { markChanged(): void }).markChanged();
          return { success: false, message: 'failed after writing' };
        },
      });
      expect(await session.runTool(direct, {})).toMatchObject({ rolledBack: true });
      expect(await contentsOf(session.filesystem)).toEqual(before);
      expect(session.snapshots).toHaveLength(1);
    });

    it('takes a snapshot for a write through a dangling symlink, so the file it created goes and the link stays', async () => {
      const session = await open();
      symlinkSync('target.txt', join(session.filesystem.root as string, 'link.txt'));
      const before = await contentsOf(session.filesystem);
      await run(session, [(fs) => fs.write('link.txt', 'through\n')]);
      expect(await contentsOf(session.filesystem)).toEqual(before);
      expect(await session.filesystem.exists('target.txt')).toBe(false);
      expect(session.snapshots).toHaveLength(1);
    });
  }
});

describe('the rollback option', () => {
  it('is snapshot or journal', async () => {
    await expect(createSession({ backend: 'memory', rollback: 'undo' as never })).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
