import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WorkspaceNamespace } from '../../src/namespaces/workspace-namespace.js';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import { sessionIdOf, StoreNamespace, userIdOf } from '../../src/namespaces/store-namespace.js';
import { createSession } from '../../src/session/index.js';
import { defineTool } from '../../src/session/define-tool.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { postgresSkipReason, usePostgresPool } from '../support/postgres.js';

describe('store namespace ids', () => {
  it('encode any string reversibly, plain ids readably, and decode only their canonical spelling', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 150 }), (id) => {
        expect(userIdOf(sessionIdOf(id))).toBe(id);
      }),
      { numRuns: 200 },
    );
    expect(sessionIdOf('alice@example.com')).toBe('user:alice@example.com');
    expect(sessionIdOf('')).toBe('user:');
    expect(sessionIdOf('a/b\0')).toBe('user:a~002fb~0000');
    expect(sessionIdOf('\ud800')).toBe('user:~d800');
    expect(userIdOf('user:~0061')).toBeUndefined(); // `a` is spelled `user:a`
    expect(userIdOf('user:a/b')).toBeUndefined();
    expect(userIdOf('user:~00')).toBeUndefined();
    expect(userIdOf('session-1')).toBeUndefined();
  });

  it('refuse ids that do not fit a session id, and anything but a string, with EINVAL', () => {
    expect(sessionIdOf('a'.repeat(1019))).toHaveLength(1024);
    expect(() => sessionIdOf('a'.repeat(1020))).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => sessionIdOf('é'.repeat(204))).toThrow(/at most 1019 characters/);
    expect(() => sessionIdOf(42)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });

  it('a namespace takes exactly one of dir or store', () => {
    expect(() => new WorkspaceNamespace({} as never)).toThrow(/exactly one of dir .* or store/);
    expect(() => new WorkspaceNamespace({ dir: '/tmp/x', store: {} } as never)).toThrow(/exactly one of dir/);
    expect(() => new WorkspaceNamespace({ store: {} as never })).toThrow(/store must be a SessionStore/);
  });
});

const unavailable = postgresSkipReason('store namespace');

const writeTool = defineTool({
  name: 'write',
  description: 'write a file',
  parameters: z.object({ path: z.string(), content: z.string() }),
  handler: async ({ path, content }, { filesystem }) => {
    await filesystem.write(path, content);
    return { success: true, message: `wrote ${path}` };
  },
});

describe.skipIf(unavailable !== undefined)('new WorkspaceNamespace({ store }) (against a real Postgres)', () => {
  const poolOf = usePostgresPool();
  let schemas = 0;

  /** A fresh store; each call to `machine()` is another process's view of it (its own namespace object). */
  function store() {
    const blobs = memoryBlobStore();
    const sessions = postgresSessionStore({ pool: poolOf(), blobs, schema: `ns_${(schemas += 1)}` });
    return { sessions, machine: () => new WorkspaceNamespace({ store: sessions, leaseMs: 5_000 }) };
  }

  it("keeps each user's files across machines, lists the ids as given, and deletes them", async () => {
    const { sessions, machine } = store();
    const first = machine();
    expect(first).toBeInstanceOf(WorkspaceNamespace);
    expect(first).toBeInstanceOf(StoreNamespace);
    const ids = ['alice', '', 'a/b\0c', '../x', '\ud800'];
    for (const [index, id] of ids.entries()) {
      const session = await first.open(id);
      expect(await session.runTool(writeTool, { path: 'who.txt', content: `user ${index}` })).toMatchObject({ success: true });
      await session.dispose();
    }
    // A session of the store that is not a user's is not listed.
    await (await createSession({ store: sessions, sessionId: 'job-7' })).dispose();

    const second = machine();
    expect(await second.list()).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const [index, id] of ids.entries()) {
      await using session = await second.open(id);
      expect((await session.filesystem.read('who.txt')).content).toBe(`user ${index}`);
      expect(await session.filesystem.list('/')).toHaveLength(1);
    }
    expect(await second.has('alice')).toBe(true);
    expect(await second.has('mallory')).toBe(false);
    expect(await second.delete('alice')).toBe(true);
    expect(await second.delete('alice')).toBe(false);
    expect(await first.has('alice')).toBe(false);
    await using fresh = await first.open('alice');
    expect(await fresh.filesystem.list('/')).toEqual([]);
  });

  it('lets one machine at a time write a user, and anyone read it', async () => {
    const { machine } = store();
    const owner = await machine().open('bob');
    await owner.filesystem.write('notes.md', 'draft');
    await owner.publish();
    await expect(machine().open('bob')).rejects.toMatchObject({ code: 'ECONFLICT' });
    await using reader = await machine().open('bob', { readOnly: true });
    expect((await reader.filesystem.read('notes.md')).content).toBe('draft');
    await expect(reader.filesystem.write('notes.md', 'x')).rejects.toMatchObject({ code: 'EROFS' });
    await owner.dispose();
    await using next = await machine().open('bob');
    expect((await next.filesystem.read('notes.md')).content).toBe('draft');
  });

  it('createSession({ namespace, user }) opens the user’s store session, and refuses options that do not apply', async () => {
    const { machine } = store();
    const namespace = machine();
    const session = await createSession({ namespace, user: 'carol' });
    expect(session.id).toBe('user:carol');
    await session.runTool(writeTool, { path: 'a.txt', content: 'kept' });
    await session.dispose();
    await using again = await createSession({ namespace, user: 'carol', readOnly: true });
    expect((await again.filesystem.read('a.txt')).content).toBe('kept');
    await expect(createSession({ namespace, user: 'carol', backend: 'memory' })).rejects.toThrow(
      /takes only user and readOnly; remove backend/,
    );
    await expect(createSession({ namespace } as never)).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
