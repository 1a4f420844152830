import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSession, defineTool } from '../../src/session/index.js';
import { type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { SESSION_KINDS } from '../support/backends.js';
import { tempDirs } from '../../src/testing/harness.js';

const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
const tool = (name: WorkspaceToolName) => tools.get(name)!;

describe('session: what a model reads', () => {
  it('a workspace path whose tail spells a hidden host directory (/tmp, /app, an allowed root) is shown as it is', async () => {
    await using session = await createSession({ backend: 'memory', allowedHostRoots: ['/zzreview'] });
    // e.g. `src/tmp/a.txt` with /tmp hidden: the scrubber hid it inside (`src<host path>`) in every listing,
    // read and error, so the model could not name the file it had just written.
    const path = 'w/zzreview/a.txt';
    const written = await session.runTool(tool('write_file'), { path, content: 'x\n' });
    expect(written.message).toBe(`Created ${path} (2 bytes).`);
    expect((await session.runTool(tool('glob'), { pattern: '**/*' })).message).toContain(path);
    const missing = await session.runTool(tool('read_file'), { path: `${path}.nope` });
    expect(missing.message).toContain(`${path}.nope does not exist`);
  });
});

describe('session: rollback exactness', () => {
  for (const backend of SESSION_KINDS) {
    it(`a handler writing through context.session.filesystem cannot land writes after an abort's rollback or after its call (${backend})`, async () => {
      await using session = await createSession({ backend });
      await session.filesystem.write('keep.txt', 'kept');
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const late: unknown[] = [];
      const controller = new AbortController();
      const stubborn = defineTool({
        name: 'stubborn',
        description: 'ignores its signal and writes through the session',
        parameters: z.object({}),
        async handler(_params, { session: own }) {
          // Aborted while it runs (timed from its start: the session records the write before the call first).
          setTimeout(() => controller.abort(), 12);
          for (let i = 0; i < 10; i += 1) {
            try {
              await own.filesystem.write(`b${i}.txt`, 'x');
            } catch (error) {
              late.push(error);
            }
            await sleep(5);
          }
          setTimeout(() => void own.filesystem.write('after.txt', 'x').catch((error: unknown) => late.push(error)), 5);
          return { success: true, message: 'done' };
        },
      });
      expect(await session.runTool(stubborn, {}, { signal: controller.signal })).toMatchObject({
        success: false,
        rolledBack: true,
        code: 'ABORT_ERR',
      });
      await sleep(150);
      // Reproduced: b1.txt … b9.txt appeared after the rollback.
      expect((await session.filesystem.list()).map((entry) => entry.name)).toEqual(['keep.txt']);
      expect(late.length).toBeGreaterThan(0);
      // Outside a call, session.filesystem is the workspace itself.
      expect(session.filesystem).toBe(session.filesystem);
      await session.filesystem.write('free.txt', 'x');
    });
  }
});

describe('session: calls that escaped the rollback', () => {
  it('a result whose getters throw is a failed call, rolled back (it rejected runTool and kept the write)', async () => {
    await using session = await createSession({ backend: 'memory' });
    const hostile = defineTool({
      name: 'hostile_result',
      description: 'writes, then returns a result that throws when read',
      parameters: z.object({}),
      async handler(_params, { filesystem }) {
        await filesystem.write('leak.txt', 'x');
        return {
          success: false,
          get message(): string {
            throw new Error('no message');
          },
        };
      },
    });
    expect(await session.runTool(hostile, {})).toMatchObject({ success: false, rolledBack: true, code: 'ETOOL' });
    expect(await session.filesystem.exists('leak.txt')).toBe(false);
  });

  it('a call aborted while its snapshot is taken does not start its handler', async () => {
    await using session = await createSession({ backend: 'memory' });
    const real = session.filesystem;
    const snapshot = real.snapshot;
    const controller = new AbortController();
    (real as unknown as Record<string, unknown>).snapshot = async (...args: Parameters<typeof snapshot>) => {
      controller.abort();
      return snapshot.apply(real, args);
    };
    let ran = false;
    const effect = defineTool({
      name: 'effect',
      description: 'has an effect beyond the workspace',
      parameters: z.object({}),
      handler() {
        ran = true;
        return { success: true, message: 'deployed' };
      },
    });
    expect(await session.runTool(effect, {}, { signal: controller.signal })).toMatchObject({
      success: false,
      code: 'ABORT_ERR',
      rolledBack: false,
    });
    expect(ran).toBe(false);
  });
});

describe('session: reset', () => {
  const tempDir = tempDirs({ prefix: 'sessionfs-review-reset-' });
  it('a read-only session on a given host root starts fresh on reset: a file deleted on the host is gone', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'm'));
    writeFileSync(join(dir, 'm/a.txt'), 'A');
    writeFileSync(join(dir, 'm/b.txt'), 'B');
    await using session = await createSession({
      backend: 'host',
      root: join(dir, 'root'),
      readOnly: true,
      sources: [{ hostPath: join(dir, 'm') }],
      allowedHostRoots: [dir],
    });
    expect((await session.filesystem.list('m')).map((entry) => entry.name)).toEqual(['a.txt', 'b.txt']);
    rmSync(join(dir, 'm/b.txt'));
    await session.reset();
    // Reproduced: b.txt stayed (the sealed root was never restored to its baseline).
    expect((await session.filesystem.list('m')).map((entry) => entry.name)).toEqual(['a.txt']);
    expect(session.filesystem.readOnly).toBe(true);
  });
});
