import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, type RemoteSession } from '../../src/session/index.js';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import { s3BlobStore } from '../../src/store/s3-blob-store.js';
import { defineTool } from '../../src/session/define-tool.js';
import { startPostgres, startS3, type RunningPostgres, type RunningS3 } from '../../bench/_servers.mjs';
import { assertBuilt } from '../cli/support.js';
import { digestOf } from './digest.mjs';
import { postgresSkipReason } from '../support/postgres.js';
import { z } from 'zod';

const unavailable = postgresSkipReason('remote session');

const CHILD = fileURLToPath(new URL('./remote-child.mjs', import.meta.url));
const BUCKET = 'remote';

const writeTool = defineTool({
  name: 'write',
  description: 'write a file',
  parameters: z.object({ path: z.string(), content: z.string(), fail: z.boolean().optional() }),
  handler: async ({ path, content, fail }, { filesystem }) => {
    await filesystem.write(path, content);
    return { success: fail !== true, message: fail === true ? 'asked to fail' : `wrote ${path}` };
  },
});

describe.skipIf(unavailable !== undefined)('openSession: sessions that resume anywhere (real Postgres + s3rver)', () => {
  let postgres: RunningPostgres;
  let s3: RunningS3;
  let pool: pg.Pool;
  let schemaCount = 0;
  beforeAll(async () => {
    assertBuilt();
    [postgres, s3] = await Promise.all([startPostgres(), startS3(BUCKET)]);
    pool = new pg.Pool({ connectionString: postgres.connectionString, max: 10 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    postgres?.stop();
    await s3?.stop();
  });

  const newStore = () => {
    schemaCount += 1;
    const schema = `remote_${schemaCount}`;
    return { schema, store: postgresSessionStore({ pool, blobs: s3BlobStore({ client: s3.client(), bucket: BUCKET }), schema }) };
  };

  /** Runs the second-machine script and resolves with its stdout lines once it exits. */
  function child(schema: string, sessionId: string, command: string, arg = ''): ChildProcessWithoutNullStreams {
    return spawn(process.execPath, [CHILD, postgres.connectionString, s3.endpoint, BUCKET, schema, sessionId, command, arg]);
  }
  const linesOf = (process: ChildProcessWithoutNullStreams): Promise<string[]> =>
    new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      process.stdout.on('data', (chunk) => (out += chunk));
      process.stderr.on('data', (chunk) => (err += chunk));
      process.on('close', (code, signal) => (code === 0 || signal !== null ? resolve(out.trim().split('\n')) : reject(new Error(err))));
    });
  const waitFor = (process: ChildProcessWithoutNullStreams, line: string): Promise<void> =>
    new Promise((resolve) => {
      let out = '';
      process.stdout.on('data', (chunk) => {
        out += chunk;
        if (out.split('\n').includes(line)) resolve();
      });
    });

  it('publishes after each successful call, not after a rolled-back one; resumes bit-exact in another process', async () => {
    const { schema, store } = newStore();
    const session = await createSession({ store, sessionId: 'resume' });
    expect(session.version).toBe(0);
    await session.runTool(writeTool, { path: '/src/a.ts', content: 'export const a = 1;\n' });
    expect(session.version).toBe(1);
    await session.filesystem.writeBytes(
      '/bin/blob',
      Uint8Array.from({ length: 256 }, (_, i) => i),
    );
    await session.runTool(writeTool, { path: '/notes.md', content: 'é\r\n' });
    const failed = await session.runTool(writeTool, { path: '/bad.txt', content: 'no', fail: true });
    expect(failed.rolledBack).toBe(true);
    expect(session.version).toBe(2);
    const local = await digestOf(session.filesystem);
    await session.dispose();
    expect(await linesOf(child(schema, 'resume', 'digest'))).toEqual([local]);
  });

  it('refuses a second writer with ECONFLICT naming the expiry; fork and readOnly open anyway', async () => {
    const { store } = newStore();
    const first = await createSession({ store, sessionId: 'busy' });
    await first.runTool(writeTool, { path: '/x.txt', content: 'x' });
    await expect(createSession({ store, sessionId: 'busy' })).rejects.toMatchObject({
      code: 'ECONFLICT',
      message: expect.stringMatching(/held until/),
    });
    const fork = await createSession({ store, sessionId: 'busy', fork: true });
    expect(fork.id).not.toBe('busy');
    expect(fork.parentId).toBe('busy');
    expect((await fork.filesystem.read('/x.txt')).content).toBe('x');
    await fork.runTool(writeTool, { path: '/x.txt', content: 'fork' });
    const view = await createSession({ store, sessionId: 'busy', readOnly: true });
    expect((await view.filesystem.read('/x.txt')).content).toBe('x');
    await expect(view.filesystem.write('/y.txt', 'y')).rejects.toMatchObject({ code: 'EROFS' });
    await Promise.all([first.dispose(), fork.dispose(), view.dispose()]);
  });

  it('a paused owner whose lease expired cannot publish over the newer owner', async () => {
    const { schema, store } = newStore();
    const seed = await createSession({ store, sessionId: 'paused' });
    await seed.runTool(writeTool, { path: '/base.txt', content: 'base' });
    await seed.dispose();
    const owner = child(schema, 'paused', 'write-and-pause', '3');
    const done = linesOf(owner);
    await waitFor(owner, 'ready');
    owner.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const newer = await createSession({ store, sessionId: 'paused' });
    await newer.runTool(writeTool, { path: '/newer.txt', content: 'newer' });
    owner.kill('SIGCONT');
    owner.stdin.write('go\n');
    expect(await done).toEqual(['ready', 'refused ECONFLICT']);
    expect((await newer.filesystem.glob('**/*')).map((match) => match.path)).toEqual(['base.txt', 'newer.txt']);
    await newer.dispose();
    const reader = await createSession({ store, sessionId: 'paused', readOnly: true });
    expect((await reader.filesystem.glob('**/*')).map((match) => match.path)).toEqual(['base.txt', 'newer.txt']);
  });

  it('kill -9 in the middle of a publish leaves the old head or the new one, never a mix', async () => {
    const { schema, store } = newStore();
    const seed = await createSession({ store, sessionId: 'killed' });
    await seed.runTool(writeTool, { path: '/base.txt', content: 'base' });
    await seed.dispose();
    const owner = child(schema, 'killed', 'publish-big', '300');
    const done = linesOf(owner);
    await waitFor(owner, 'publishing');
    await new Promise((resolve) => setTimeout(resolve, 150));
    owner.kill('SIGKILL');
    await done;
    const after = await createSession({ store, sessionId: 'killed', readOnly: true });
    const files = await after.filesystem.glob('**/*');
    expect([1, 301]).toContain(files.length);
    for (const { path } of files) await after.filesystem.readBytes(path); // every blob the head names exists
  });

  it('gc racing publishes never loses anything reachable (property)', async () => {
    const { store } = newStore();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('s1', 's2', 's3'), fc.string({ maxLength: 8 })), { minLength: 3, maxLength: 10 }),
        async (writes) => {
          const sessions = new Map<string, RemoteSession>();
          const expected = new Map<string, string>();
          const publishes = (async () => {
            for (const [id, content] of writes) {
              if (!sessions.has(id)) sessions.set(id, await createSession({ store, sessionId: id }));
              await sessions.get(id)!.runTool(writeTool, { path: `/f-${content.length}.txt`, content });
              expected.set(`${id}/f-${content.length}.txt`, content);
            }
          })();
          const collections = (async () => {
            for (let i = 0; i < 4; i += 1) await store.gc({ graceMs: 0 });
          })();
          await Promise.all([publishes, collections]);
          for (const session of sessions.values()) await session.dispose();
          await store.gc({ graceMs: 0 });
          for (const [key, content] of expected) {
            const [id, name] = key.split('/') as [string, string];
            const view = await createSession({ store, sessionId: id, readOnly: true });
            expect((await view.filesystem.readBytes(`/${name}`)).content).toEqual(new TextEncoder().encode(content));
          }
        },
      ),
      { numRuns: 8 },
    );
  });
});
