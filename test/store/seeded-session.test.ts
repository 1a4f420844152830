import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { localSessionStore } from '../../src/store/local-store.js';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { contentsOf } from '../../src/testing/harness.js';
import { caught, hostTrees } from '../support/backends.js';
import { postgresSkipReason, usePostgresPool } from '../support/postgres.js';

const unavailable = postgresSkipReason('seeded stored session');

/** A project with what hydration leaves out by default (`.git`) and what the policy below denies (`.env`). */
const PROJECT = {
  'src/a.ts': 'export const a = 1;\n',
  'README.md': '# project\n',
  '.env': 'TOKEN=secret\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
};
const SEEDED = { 'p/': '', 'p/.env': 'TOKEN=secret\n', 'p/README.md': '# project\n', 'p/src/': '', 'p/src/a.ts': 'export const a = 1;\n' };

async function blobCount(store: SessionStore): Promise<number> {
  let count = 0;
  for await (const _hash of store.blobs.list?.() ?? []) count += 1;
  return count;
}

/** `createSession({ store, sessionId, sources })` on every store: `storeNamed` gives a fresh, empty store per name. */
function seededSessions(storeNamed: (name: string) => SessionStore): void {
  const host = hostTrees();

  it('seeds a new session with hydration rules, publishes it as the first head and reports what it skipped', async () => {
    const store = storeNamed('seeds');
    const project = host.tree(PROJECT);
    const session = await createSession({
      store,
      sessionId: 'seeded',
      sources: [{ hostPath: project, path: 'p' }],
      allowedHostRoots: [project],
      policy: { deny: ['**/.env'] },
    });
    expect(session.version).toBe(1);
    const { 'p/.env': _denied, ...admitted } = SEEDED;
    expect(await contentsOf(session.filesystem)).toEqual(admitted);
    expect(session.hydration).toEqual({
      files: 2,
      bytes: 30,
      skipped: [
        { path: 'p/.env', reason: 'denied by the workspace policy' },
        { path: 'p/.git', reason: "version-control directory (a source's includeGit: 'read-only' brings it in read-only)" },
      ],
    });
    expect((await store.head('seeded'))?.root).toBeDefined();
    await session.dispose();
  });

  it('a resumed session has the seeded files (and the work since) without hydrating again', async () => {
    const store = storeNamed('resume');
    const project = host.tree(PROJECT);
    const first = await createSession({ store, sessionId: 's', sources: [{ hostPath: project, path: 'p' }], allowedHostRoots: [project] });
    await first.filesystem.write('p/notes.md', 'the model wrote this\n');
    await first.dispose();
    writeFileSync(join(project, 'README.md'), '# changed on the host since\n');

    const resumed = await createSession({ store, sessionId: 's' });
    expect(resumed.hydration).toBeUndefined();
    expect(await contentsOf(resumed.filesystem)).toEqual({ ...SEEDED, 'p/notes.md': 'the model wrote this\n' });
    await resumed.dispose();
    const version = (await store.head('s'))?.version;

    // seed: 'if-new' resumes an existing session as stored, hydrating nothing.
    const again = await createSession({
      store,
      sessionId: 's',
      sources: [{ hostPath: project, path: 'p' }],
      allowedHostRoots: [project],
      seed: 'if-new',
    });
    expect(again.hydration).toBeUndefined();
    expect(again.version).toBe(version);
    expect((await contentsOf(again.filesystem))['p/README.md']).toBe('# project\n');
    await again.dispose();
  });

  it('refuses sources for an existing session unless seed is if-new, changing nothing and holding no lease', async () => {
    const store = storeNamed('existing');
    const project = host.tree(PROJECT);
    const first = await createSession({ store, sessionId: 's', sources: [{ hostPath: project }], allowedHostRoots: [project] });
    await first.dispose();
    const before = await store.head('s');
    const error = await caught(() =>
      createSession({ store, sessionId: 's', sources: [{ hostPath: project }], allowedHostRoots: [project] }),
    );
    expect(error).toMatchObject({ name: 'ConflictError', code: 'ECONFLICT' });
    expect(error.message).toContain("seed: 'if-new'");
    expect(await store.head('s')).toEqual(before);
    const reopened = await createSession({ store, sessionId: 's' }); // the refused open gave its lease back
    await reopened.dispose();
  });

  it('refuses bad sources with nothing stored: no session, no blob', async () => {
    const store = storeNamed('refused');
    const allowed = host.dir();
    const outside = host.tree(PROJECT);
    const escaping = await caught(() =>
      createSession({ store, sessionId: 'bad', sources: [{ hostPath: outside }], allowedHostRoots: [allowed] }),
    );
    expect(escaping).toMatchObject({ name: 'PathEscapeError', code: 'EACCES' });
    expect(escaping.message).not.toContain(outside);
    const unallowed = await caught(() => createSession({ store, sessionId: 'bad', sources: [{ hostPath: outside }] }));
    expect(unallowed).toMatchObject({ code: 'EACCES' });
    const tooBig = await caught(() =>
      createSession({ store, sessionId: 'bad', sources: [{ hostPath: outside, maxBytes: 1 }], allowedHostRoots: [outside] }),
    );
    expect(tooBig).toMatchObject({ name: 'LimitExceededError', code: 'EFBIG' });
    const oldKey = await caught(() =>
      createSession({ store, sessionId: 'bad', sources: [{ hostPath: outside, mountPath: 'p' } as never], allowedHostRoots: [outside] }),
    );
    expect(oldKey.message).toContain('`mountPath` is now `path`');
    expect(await store.head('bad')).toBeUndefined();
    expect(await store.listSessions()).toEqual([]);
    expect(await blobCount(store)).toBe(0);
    // The name is free: a good seed takes it at once.
    const session = await createSession({
      store,
      sessionId: 'bad',
      sources: [{ hostPath: outside, path: 'p' }],
      allowedHostRoots: [outside],
    });
    expect(await contentsOf(session.filesystem)).toEqual(SEEDED);
    await session.dispose();
  });

  it('refuses what only seeding uses without sources, and sources with fork or readOnly, before taking anything', async () => {
    const store = storeNamed('options');
    const project = host.tree(PROJECT);
    const sources = [{ hostPath: project }];
    await expect(createSession({ store, sessionId: 's', allowedHostRoots: [project] })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(createSession({ store, sessionId: 's', seed: 'if-new' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(
      createSession({ store, sessionId: 's', sources, allowedHostRoots: [project], seed: 'always' as never }),
    ).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(createSession({ store, sessionId: 's', sources, allowedHostRoots: [project], readOnly: true })).rejects.toMatchObject({
      code: 'EINVAL',
    });
    await expect(createSession({ store, sessionId: 's', sources, allowedHostRoots: [project], fork: true })).rejects.toMatchObject({
      code: 'EINVAL',
    });
    const renamed = await caught(() => createSession({ store, sessionId: 's', mounts: sources } as never));
    expect(renamed.message).toContain('`mounts` is now `sources`');
    expect(await store.listSessions()).toEqual([]);
  });
}

describe('stored sessions seeded from host folders: localSessionStore', () => {
  const base = mkdtempSync(join(tmpdir(), 'sessionfs-seeded-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  seededSessions((name) => localSessionStore({ dir: join(base, name) }));
});

describe.skipIf(unavailable !== undefined)('stored sessions seeded from host folders: postgresSessionStore (real Postgres)', () => {
  const poolOf = usePostgresPool(4);
  seededSessions((name) => postgresSessionStore({ pool: poolOf(), blobs: memoryBlobStore(), schema: `seeded_${name}` }));
});
