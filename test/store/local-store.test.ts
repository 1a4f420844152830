import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceNamespace } from '../../src/namespaces/workspace-namespace.js';
import { localSessionStore } from '../../src/store/local-store.js';
import { createSession } from '../../src/session/index.js';
import { assertBuilt } from '../cli/support.js';
import { digestOf } from './digest.mjs';
import { publishFiles, sessionStoreContract } from './session-store-contract.js';

const CHILD = fileURLToPath(new URL('./local-child.mjs', import.meta.url));
const run = promisify(execFile);

describe('localSessionStore', () => {
  let base: string;
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'sessionfs-local-store-'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const dirOf = (name: string): string => join(base, name);

  sessionStoreContract((name) => localSessionStore({ dir: dirOf(name) }));

  it('a second process resumes a session exactly, and the lease passes between processes', async () => {
    assertBuilt();
    const dir = dirOf('resume');
    const first = await createSession({ store: localSessionStore({ dir }), sessionId: 'shared' });
    await first.filesystem.write('/mine.txt', 'from the first process');
    await first.filesystem.writeBytes(
      '/bin.dat',
      Uint8Array.from({ length: 256 }, (_, i) => i),
    );
    await first.publish();
    const { stderr } = await run(process.execPath, [CHILD, dir, 'shared', 'write', '3']).catch((error: { stderr: string }) => error);
    expect(stderr).toMatch(/open elsewhere: its lease is held until/);
    await first.dispose();
    const { stdout } = await run(process.execPath, [CHILD, dir, 'shared', 'write', '3']);
    const resumed = await createSession({ store: localSessionStore({ dir }), sessionId: 'shared' });
    expect(await digestOf(resumed.filesystem)).toBe(stdout.trim());
    expect((await resumed.filesystem.read('/mine.txt')).content).toBe('from the first process');
    expect(resumed.version).toBe(4); // each process published once and again when it disposed
    await resumed.dispose();
  });

  it('WorkspaceNamespace works on it: users resume, one writer at a time, odd ids kept', async () => {
    const dir = dirOf('namespace');
    const users = new WorkspaceNamespace({ store: localSessionStore({ dir }) });
    const alice = await users.open('alice/../a\0b');
    await alice.filesystem.write('notes.md', 'remember');
    await expect(users.open('alice/../a\0b')).rejects.toMatchObject({ code: 'ECONFLICT' });
    await alice.dispose();
    const again = new WorkspaceNamespace({ store: localSessionStore({ dir }) });
    expect(await again.list()).toEqual(['alice/../a\0b']);
    const resumed = await again.open('alice/../a\0b');
    expect((await resumed.filesystem.read('notes.md')).content).toBe('remember');
    await resumed.dispose();
  });

  it("a dead owner's lease expires: the next open waits it out, not forever", async () => {
    const dir = dirOf('expiry');
    const store = localSessionStore({ dir });
    await store.acquire('s', 'dead', 1000);
    await expect(createSession({ store, sessionId: 's' })).rejects.toMatchObject({ code: 'ECONFLICT' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const session = await createSession({ store, sessionId: 's' });
    await session.dispose();
  });

  it('refuses session names with /, .., NUL or 10 KB, and keeps odd ones reversible', async () => {
    const store = localSessionStore({ dir: dirOf('names') });
    for (const bad of ['a/b', '../x', '..', '.', 'a\0b', 'x'.repeat(10 * 1024), '', 'a\\b'])
      await expect(store.acquire(bad, 'o', 30_000)).rejects.toMatchObject({ code: 'EINVAL' });
    const odd = ['user:~0041', 'ÄÖ é', 'a..b', '-', ' '.repeat(3), 'y'.repeat(1024)];
    for (const id of odd) await store.acquire(id, 'o', 30_000);
    expect((await store.listSessions()).map((head) => head.sessionId).sort()).toEqual([...odd].sort());
    for (const name of readdirSync(join(dirOf('names'), 'sessions'))) expect(name.length).toBeLessThan(200);
  });

  it('refuses a directory that is not a store, or another version of one, with nothing changed', () => {
    const foreign = dirOf('foreign');
    rmSync(foreign, { recursive: true, force: true });
    spawnSync('mkdir', ['-p', foreign]);
    writeFileSync(join(foreign, 'precious.txt'), 'keep me');
    expect(() => localSessionStore({ dir: foreign })).toThrow(
      expect.objectContaining({ code: 'EINVAL', message: expect.stringMatching(/not a session store/) }),
    );
    expect(readdirSync(foreign)).toEqual(['precious.txt']);
    const future = dirOf('future');
    localSessionStore({ dir: future });
    writeFileSync(join(future, 'sessionfs-store.json'), JSON.stringify({ format: 'sessionfs-local-store', version: 2 }));
    const before = readdirSync(future).sort();
    expect(() => localSessionStore({ dir: future })).toThrow(
      expect.objectContaining({ code: 'ENOTSUP', message: expect.stringMatching(/version 2/) }),
    );
    expect(readdirSync(future).sort()).toEqual(before);
    expect(() => localSessionStore({ dir: join(foreign, 'precious.txt') })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => localSessionStore({ dir: dirOf('x'), fsynch: false } as never)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });

  // A read-only and a full file system, made in a user namespace (as the sandbox does) by a child process.
  const canUnshare = spawnSync('unshare', ['-rm', 'true']).status === 0;
  it.skipIf(!canUnshare)(
    'a store directory that is read-only or full is a typed error at start; a full disk fails a publish cleanly',
    async () => {
      assertBuilt();
      const script = `
      import { createSession } from ${JSON.stringify(fileURLToPath(new URL('../../dist/src/index.js', import.meta.url)))};
      import { localSessionStore } from ${JSON.stringify(fileURLToPath(new URL('../../dist/src/entries/store.js', import.meta.url)))};
      const report = (what, error) => console.log(what, error?.name, error?.code);
      try { localSessionStore({ dir: '/mnt/ro/store' }); report('ro ok'); } catch (e) { report('ro', e); }
      try { localSessionStore({ dir: '/mnt/full/store' }); report('full ok'); } catch (e) { report('full', e); }
      const store = localSessionStore({ dir: '/mnt/small/store' });
      const session = await createSession({ store, sessionId: 's' });
      await session.filesystem.write('/a.txt', 'small');
      await session.publish();
      await session.filesystem.write('/big.bin', 'x'.repeat(400_000));
      try { await session.publish(); report('big ok'); } catch (e) { report('big', e); }
      console.log('head', (await store.head('s')).version);
      const again = await createSession({ store, sessionId: 's', readOnly: true });
      console.log('reopen', again.version, (await again.filesystem.read('/a.txt')).content);
      process.exit(0);`;
      const scriptPath = join(base, 'fs-limits.mjs');
      writeFileSync(scriptPath, script);
      const shell = [
        'set -e',
        'mkdir -p /mnt/ro /mnt/full /mnt/small',
        'mount -t tmpfs -o size=64k,ro tmpfs /mnt/ro',
        'mount -t tmpfs -o size=4k tmpfs /mnt/full && dd if=/dev/zero of=/mnt/full/fill bs=1k count=8 2>/dev/null || true',
        'mount -t tmpfs -o size=256k tmpfs /mnt/small',
        `exec ${process.execPath} ${scriptPath}`,
      ].join('\n');
      const { stdout } = await run('unshare', ['-rm', 'sh', '-c', shell]);
      expect(stdout.split('\n')).toEqual(
        expect.arrayContaining([
          'ro StoreUnavailableError EUNAVAILABLE',
          'full QuotaExceededError EDQUOT',
          'big QuotaExceededError EDQUOT',
          'head 1',
          'reopen 1 small',
        ]),
      );
    },
  );

  it('a corrupted blob is detected on read (ECORRUPT); the session stays openable at its head and repairs', async () => {
    const dir = dirOf('corrupt');
    const store = localSessionStore({ dir });
    await store.acquire('s', 'a', 30_000);
    await publishFiles(store, 's', 'a', 0, { '/good.txt': 'good', '/bad.txt': 'bad' });
    const head = await store.head('s');
    const hash = (await import('node:crypto')).createHash('sha256').update('bad').digest('hex');
    writeFileSync(join(dir, 'blobs', hash.slice(0, 2), hash), 'tampered');
    await store.release('s', 'a');
    const session = await createSession({ store: localSessionStore({ dir }), sessionId: 's' });
    expect((await session.filesystem.read('/good.txt')).content).toBe('good');
    await expect(session.filesystem.read('/bad.txt')).rejects.toMatchObject({ code: 'ECORRUPT' });
    expect(await store.head('s')).toEqual(head);
    await session.filesystem.write('/bad.txt', 'bad'); // the same content again: stored anew
    await session.publish();
    await session.dispose();
    const reopened = await createSession({ store, sessionId: 's', readOnly: true });
    expect((await reopened.filesystem.read('/bad.txt')).content).toBe('bad');
    expect(readdirSync(join(dir, 'corrupt'))).toHaveLength(1);
  });

  it('keeps the configured number of published versions, and gc keeps them', async () => {
    const dir = dirOf('retention');
    const store = localSessionStore({ dir, keepVersions: 2 });
    await store.acquire('s', 'a', 30_000);
    for (let version = 0; version < 5; version += 1) await publishFiles(store, 's', 'a', version, { '/n.txt': String(version) });
    const record = JSON.parse(readFileSync(join(dir, 'sessions', 's-s.json'), 'utf8')) as { retained: { version: number }[] };
    expect(record.retained.map((entry) => entry.version)).toEqual([4, 5]);
    await store.gc({ graceMs: 0 });
    const collected = await store.gc({ graceMs: 0 });
    expect(collected.reachable).toBe(4); // two roots and two contents
  });
});
