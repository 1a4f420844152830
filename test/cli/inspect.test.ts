import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { SessionHistory } from '../../src/history/index.js';
import { createSession, defineTool } from '../../src/session/index.js';
import { localSessionStore } from '../../src/store/local-store.js';
import { makeSession, rawRequest, startInspector, type RunningInspector } from './inspect-support.js';
import { serveSession } from './stored-sessions-support.js';
import { assertBuilt, runCli } from './support.js';

interface SessionJson {
  name: string;
  version: number;
  open: boolean;
  history: SessionHistory;
}

describe('sessionfs inspect', () => {
  let base: string;
  let store: string;
  let inspector: RunningInspector;
  const get = (path: string, headers: Record<string, string> = {}) =>
    rawRequest(inspector.port, `${path}${path.includes('?') ? '&' : '?'}token=${inspector.token}`, { headers });
  const json = async <T>(path: string): Promise<T> => {
    const answer = await get(path);
    expect(answer.status, answer.body).toBe(200);
    return JSON.parse(answer.body) as T;
  };
  const post = (path: string, body: unknown, headers: Record<string, string> = { origin: inspector.origin }) =>
    rawRequest(inspector.port, `${path}?token=${inspector.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    assertBuilt();
    base = mkdtempSync(join(tmpdir(), 'sessionfs-inspect-'));
    store = join(base, 'store');
    await makeSession(store, 'demo');
    inspector = await startInspector(['--store-dir', store, '--session', 'demo']);
  }, 60_000);
  afterAll(async () => {
    await inspector?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  it('prints a 127.0.0.1 URL with a token, and refuses every request without it (403)', async () => {
    expect(inspector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}#demo$/);
    for (const path of ['/', '/inspect.js', '/inspect.css', '/api/sessions', '/api/session?name=demo', '/api/patch?name=demo'])
      expect((await rawRequest(inspector.port, path)).status, path).toBe(403);
    expect((await rawRequest(inspector.port, '/api/sessions?token=wrong')).status).toBe(403);
    expect((await rawRequest(inspector.port, `/api/sessions?token=${inspector.token}x`)).status).toBe(403);
    // With the token: the page, its script, and the API.
    expect((await get('/')).status).toBe(200);
    expect((await get('/inspect.js')).headers['content-type']).toMatch(/^text\/javascript/);
    expect((await rawRequest(inspector.port, '/api/sessions', { headers: { 'x-sessionfs-token': inspector.token } })).status).toBe(200);
  });

  it('refuses another origin or host, even with the token, and sends no CORS header', async () => {
    const evil = { origin: 'http://evil.example' };
    expect((await get('/api/sessions', evil)).status).toBe(403);
    expect((await get('/api/sessions', { origin: `http://localhost:${inspector.port}` })).status).toBe(403);
    expect((await get('/api/sessions', { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // DNS rebinding: a name that resolves to 127.0.0.1 still names another host.
    expect((await get('/api/sessions', { host: `rebind.example:${inspector.port}` })).status).toBe(403);
    expect((await get('/api/sessions', { host: `localhost:${inspector.port}` })).status).toBe(403);
    // Actions: from the page's origin only (a POST without Origin is refused too), and no preflight passes.
    const demo = await json<SessionJson>('/api/session?name=demo');
    const snapshot = demo.history.turns[0]!.operations[0]!.after!;
    expect((await post('/api/restore', { name: 'demo', snapshot }, evil)).status).toBe(403);
    expect((await post('/api/restore', { name: 'demo', snapshot }, {})).status).toBe(403);
    const preflight = await rawRequest(inspector.port, `/api/restore?token=${inspector.token}`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    for (const answer of [preflight, await get('/api/sessions'), await get('/')])
      expect(Object.keys(answer.headers).filter((header) => header.startsWith('access-control-'))).toEqual([]);
    expect((await json<SessionJson>('/api/session?name=demo')).version).toBe(demo.version);
  });

  it('serves the sessions, the history by turns, side-by-side diffs, blame and patches as JSON and text', async () => {
    const sessions = await json<{ name: string }[]>('/api/sessions');
    expect(sessions.map((session) => session.name)).toEqual(['demo']);
    const demo = await json<SessionJson>('/api/session?name=demo');
    expect(demo.open).toBe(false);
    expect(demo.history.turns.map((turn) => turn.label)).toEqual(['scaffold', 'edit', 'tidy']);
    expect(demo.history.turns[1]!.operations.map((operation) => [operation.id, operation.tool])).toEqual([['op-3', 'edit_file']]);

    const diff = await json<{ files: { path: string; status: string; rows: unknown[] }[] }>('/api/diff?name=demo&op=op-3');
    expect(diff.files).toEqual([
      {
        path: 'src/a.ts',
        status: 'modified',
        rows: [
          ['same', 1, 'export const a = 1;', 1, 'export const a = 1;'],
          ['mod', 2, 'export const b = 2;', 2, 'export const b = 20;'],
          ['same', 3, 'export const c = 3;', 3, 'export const c = 3;'],
        ],
      },
    ]);
    const deleted = await json<{ files: { path: string; status: string; rows: unknown[] }[] }>('/api/diff?name=demo&op=op-4');
    expect(deleted.files).toEqual([{ path: 'README.md', status: 'deleted', rows: [['del', 1, '# demo', 0, '']] }]);

    const blame = await json<{ lines: { text: string; operationId?: string }[] }>('/api/blame?name=demo&path=src/a.ts');
    expect(blame.lines.map((line) => `${line.operationId}:${line.text}`)).toEqual([
      'op-1:export const a = 1;',
      'op-3:export const b = 20;',
      'op-1:export const c = 3;',
    ]);

    const patch = await get('/api/patch?name=demo&op=op-3');
    expect(patch.headers['content-type']).toMatch(/^text\/x-diff/);
    expect(patch.headers['content-disposition']).toBe('attachment; filename="demo-op-3.patch"');
    expect(patch.body).toContain('-export const b = 2;\n+export const b = 20;');
    expect((await get('/api/patch?name=demo')).body).toContain('diff --git a/src/a.ts b/src/a.ts');

    // Bad input: typed errors as JSON, with their status; nothing shown holds the store's host path.
    const missing = await get('/api/session?name=nope');
    expect([missing.status, JSON.parse(missing.body).error.code]).toEqual([404, 'ENOENT']);
    expect((await get('/api/diff?name=demo&op=op-99')).status).toBe(404);
    expect((await get('/api/blame?name=demo&path=nope.txt')).status).toBe(404);
    const notOurs = await post('/api/restore-preview', { name: 'demo', snapshot: 'not-a-snapshot' });
    expect([notOurs.status, JSON.parse(notOurs.body).error.code]).toEqual([400, 'EINVAL']);
    for (const answer of [missing, notOurs, await get('/api/session?name=demo'), await get('/api/sessions')])
      expect(answer.body).not.toContain(base);
  });

  it('previews a restore without changing anything, restores with a receipt, and forks into a new session', async () => {
    const demo = await json<SessionJson>('/api/session?name=demo');
    const [write] = demo.history.turns[0]!.operations;
    const preview = await post('/api/restore-preview', { name: 'demo', snapshot: write!.after });
    expect(JSON.parse(preview.body)).toEqual({ created: [], modified: ['src/a.ts'], deleted: [], blocked: [] });
    expect((await json<SessionJson>('/api/session?name=demo')).version).toBe(demo.version);

    const fork = await post('/api/fork', { name: 'demo', snapshot: write!.after, to: 'demo-fork' });
    expect(fork.status, fork.body).toBe(200);
    const child = await json<SessionJson & { parent: string }>('/api/session?name=demo-fork');
    expect(child.parent).toBe('demo');
    expect(child.history.turns.at(-1)?.label).toBe('inspector: fork of demo');
    const forked = await json<{ lines: { text: string; operationId?: string }[] }>('/api/blame?name=demo-fork&path=src/a.ts');
    expect(forked.lines.map((line) => `${line.operationId}:${line.text}`)[1]).toBe('op-1:export const b = 2;');
    expect((await get('/api/blame?name=demo-fork&path=README.md')).status).toBe(404);
    expect((await post('/api/fork', { name: 'demo', snapshot: write!.after, to: 'demo-fork' })).status).toBe(409);

    const restored = await post('/api/restore', { name: 'demo', snapshot: demo.history.turns[1]!.operations[0]!.after });
    expect(restored.status, restored.body).toBe(200);
    expect(JSON.parse(restored.body).receipt.matches).toBe(true);
    const after = await json<SessionJson>('/api/session?name=demo');
    expect(after.version).toBeGreaterThan(demo.version);
    expect(after.history.turns.at(-1)?.operations.map((operation) => [operation.kind, operation.changed])).toEqual([
      ['restore', [{ path: 'README.md', status: 'added' }]],
    ]);
  });

  it('attaches to the session a running `sessionfs mcp --session` serves: views follow it, a restore is refused, a fork works', async () => {
    const served = await serveSession(['--session', 'live', '--store-dir', store]);
    try {
      expect((await served.call('write_file', { path: 'live.txt', content: 'one\n' })).isError).toBe(false);
      expect((await served.call('edit_file', { path: 'live.txt', old_string: 'one', new_string: 'two' })).isError).toBe(false);
      const live = await json<SessionJson>('/api/session?name=live');
      expect(live.open).toBe(true);
      expect(live.history.turns.flatMap((turn) => turn.operations.map((operation) => operation.tool))).toEqual(['write_file', 'edit_file']);
      const first = live.history.turns[0]!.operations[0]!;
      expect((await json<{ lines: { operationId: string }[] }>('/api/blame?name=live&path=live.txt')).lines[0]?.operationId).toBe('op-2');
      expect(JSON.parse((await post('/api/restore-preview', { name: 'live', snapshot: first.after })).body).modified).toEqual(['live.txt']);

      const refused = await post('/api/restore', { name: 'live', snapshot: first.after });
      expect(refused.status).toBe(409);
      expect(JSON.parse(refused.body).error.message).toMatch(/open in another process .*Stop that server first, or fork/);
      // The server goes on as if nothing happened.
      expect((await served.call('read_file', { path: 'live.txt' })).text).toContain('two');

      expect((await post('/api/fork', { name: 'live', snapshot: first.after, to: 'live-copy' })).status).toBe(200);
      await served.call('write_file', { path: 'more.txt', content: 'x' });
      const tools = (await json<SessionJson>('/api/session?name=live')).history.turns.map((turn) => turn.operations[0]?.tool);
      expect(tools).toEqual(['write_file', 'edit_file', 'read_file', 'write_file']);
    } finally {
      await served.client.close();
      await served.exited;
    }
    expect((await runCli(['sessions', 'show', 'live-copy', '--store-dir', store, '--json'])).stdout).toContain('"parent": "live"');
  });

  it("shows each call's audit events: a call that writes two files has two write events", async () => {
    const session = await createSession({ store: localSessionStore({ dir: store }), sessionId: 'audited' });
    const writeTwo = defineTool({
      name: 'write_two',
      description: 'writes two files',
      parameters: z.object({}),
      handler: async (_params, { filesystem }) => {
        await filesystem.write('one.txt', 'one');
        await filesystem.write('dir/two.txt', 'two!');
        return { success: true, message: 'done' };
      },
    });
    expect((await session.runTool(writeTwo, {})).success).toBe(true);
    await session.dispose();

    const audited = await json<SessionJson>('/api/session?name=audited');
    const call = audited.history.turns.flatMap((turn) => turn.operations).find((operation) => operation.tool === 'write_two');
    const writes = call?.audit?.filter((event) => event.op === 'write');
    expect(writes?.map(({ op, path, outcome, bytes }) => ({ op, path, outcome, bytes }))).toEqual([
      { op: 'write', path: 'one.txt', outcome: 'ok', bytes: 3 },
      { op: 'write', path: 'dir/two.txt', outcome: 'ok', bytes: 4 },
    ]);
    expect(writes?.every((event) => typeof event.durationMs === 'number')).toBe(true);
    expect(call?.auditOmitted).toBeUndefined();
  });

  it('refuses bad flags and a missing session', async () => {
    const bad = await runCli(['inspect', '--store-dir', store, '--root', '.']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--root is not an option of inspect')]);
    const missing = await runCli(['inspect', '--store-dir', store, '--session', 'nope']);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('no session named "nope"')]);
  });
});
