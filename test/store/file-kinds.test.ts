import { execFileSync } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, startS3, type RunningPostgres, type RunningS3 } from '../../bench/_servers.mjs';
import { pushSnapshot } from '../../src/export/remote.js';
import { createSession } from '../../src/session/index.js';
import { localSessionStore } from '../../src/store/local-store.js';
import { postgresSessionStore } from '../../src/store/postgres-store.js';
import { s3BlobStore } from '../../src/store/s3-blob-store.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { expectError, kindsOf, plantKinds } from '../../src/testing/index.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { storeDriver } from '../../src/store/store-driver.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { postgresSkipReason } from '../support/postgres.js';

/**
 * Remote sessions keep file kinds: a session holding an executable script, a relative link, a link to a
 * directory and a dangling link resumes exactly on another machine (a new store handle: nothing shared but
 * the store), through a fork, and after a change of mode alone.
 */
function kindsSurvive(storeFor: () => SessionStore): void {
  it('resumes, forks and opens read-only with every executable bit and link exactly', async () => {
    const first = await createSession({ store: storeFor(), sessionId: 'kinds' });
    await plantKinds(first.filesystem);
    const planted = await kindsOf(first.filesystem);
    expect(planted).toMatchObject({ 'bin/run.sh': '100755 #!/bin/sh\necho hi\n', dangling: '120000 missing/nowhere.txt' });
    await first.dispose(); // publishes
    const resumed = await createSession({ store: storeFor(), sessionId: 'kinds' });
    expect(await kindsOf(resumed.filesystem)).toEqual(planted);
    expect((await resumed.filesystem.read('lib-dir/a.txt')).content).toBe('a');
    const fork = await createSession({ store: storeFor(), sessionId: 'kinds', fork: true });
    expect(await kindsOf(fork.filesystem)).toEqual(planted);
    await fork.dispose();
    const view = await createSession({ store: storeFor(), sessionId: 'kinds', readOnly: true });
    expect(await kindsOf(view.filesystem)).toEqual(planted);
    await view.dispose();
    await resumed.dispose();
  });

  it('publishes a change of mode alone, and a link retargeted, as new versions', async () => {
    const first = await createSession({ store: storeFor(), sessionId: 'modes' });
    await plantKinds(first.filesystem);
    await first.publish();
    const version = first.version;
    await first.filesystem.setExecutable('bin/run.sh', false);
    await first.publish();
    expect(first.version).toBe(version + 1);
    await first.filesystem.delete('src/a-link.txt');
    await first.filesystem.symlink('../bin/run.sh', 'src/a-link.txt');
    await first.dispose();
    const resumed = await createSession({ store: storeFor(), sessionId: 'modes', readOnly: true });
    expect(await kindsOf(resumed.filesystem)).toMatchObject({
      'bin/run.sh': '100644 #!/bin/sh\necho hi\n',
      'src/a-link.txt': '120000 ../bin/run.sh',
    });
    expect((await resumed.filesystem.read('src/a-link.txt')).content).toBe('#!/bin/sh\necho hi');
    await resumed.dispose();
  });
}

describe('links in a blob tree and the protect rule', () => {
  it('judges a write through a link by where it lands: protected content stays read-only (resolve)', async () => {
    const driver = storeDriver({ blobs: memoryBlobStore() });
    // There when the workspace opened, as a host repository is: protected by the default rule.
    await createWorkspace(driver).write('repo/.git/config', 'safe');
    const ws = createWorkspace(driver);
    await ws.symlink('repo/.git', 'g');
    await expectError(ws.write('g/config', 'planted'), 'PolicyError', 'EPERM');
    await expectError(ws.setExecutable('g/config', true), 'PolicyError', 'EPERM');
    expect(await kindsOf(ws, 'repo')).toEqual({ 'repo/.git/': 'dir', 'repo/.git/config': '100644 safe' });
  });
});

describe('file kinds in the local store', () => {
  let dir: string;
  /** Git repositories and patches, beside the store. */
  let scratch: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sessionfs-kinds-store-'));
    scratch = mkdtempSync(join(tmpdir(), 'sessionfs-kinds-git-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  kindsSurvive(() => localSessionStore({ dir }));

  it('pushSnapshot of a stored session writes git modes 100755 and 120000, a link as its target text', async () => {
    const remote = join(scratch, 'remote.git');
    execFileSync('git', ['init', '--quiet', '--bare', remote]);
    const session = await createSession({ store: localSessionStore({ dir }), sessionId: 'pushed' });
    await plantKinds(session.filesystem);
    const snapshot = await session.filesystem.snapshot();
    const { ref } = await pushSnapshot(session.filesystem, snapshot, { remote });
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: remote, encoding: 'utf8' });
    expect(git('ls-tree', '-r', '--format=%(objectmode) %(path)', ref).trim().split('\n')).toEqual([
      '100755 bin/run.sh',
      '120000 dangling',
      '120000 lib-dir',
      '120000 src/a-link.txt',
      '100644 src/lib/a.txt',
    ]);
    expect(git('cat-file', 'blob', `${ref}:lib-dir`)).toBe('src/lib');
    await session.dispose();
  });

  it('patch() of a stored session is accepted by git apply with its modes, and a mode change alone too', async () => {
    const repo = join(scratch, 'applied');
    execFileSync('git', ['init', '--quiet', repo]);
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
    const session = await createSession({ store: localSessionStore({ dir }), sessionId: 'patched' });
    const empty = await session.filesystem.snapshot();
    await plantKinds(session.filesystem);
    const planted = await session.filesystem.snapshot();
    await session.filesystem.setExecutable('src/lib/a.txt', true);
    for (const patch of [await session.filesystem.patch(empty, planted), await session.filesystem.patch(planted)]) {
      const file = join(scratch, 'change.patch');
      writeFileSync(file, patch);
      git('apply', '--index', file);
    }
    expect(
      git('ls-files', '-s')
        .replace(/ [0-9a-f]{40} 0\t/g, ' ')
        .trim()
        .split('\n'),
    ).toEqual(['100755 bin/run.sh', '120000 dangling', '120000 lib-dir', '120000 src/a-link.txt', '100755 src/lib/a.txt']);
    expect(readlinkSync(join(repo, 'lib-dir'))).toBe('src/lib');
    await session.dispose();
  });
});

const unavailable = postgresSkipReason('remote file kinds');

describe.skipIf(unavailable !== undefined)('file kinds in remote sessions (real Postgres + s3rver)', () => {
  let postgres: RunningPostgres;
  let s3: RunningS3;
  const pools: pg.Pool[] = [];
  beforeAll(async () => {
    [postgres, s3] = await Promise.all([startPostgres(), startS3('kinds')]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    postgres?.stop();
    await s3?.stop();
  });

  // Each call is another machine: its own pool and its own S3 client and blob cache.
  kindsSurvive(() => {
    const pool = new pg.Pool({ connectionString: postgres.connectionString, max: 4 });
    pools.push(pool);
    return postgresSessionStore({ pool, blobs: s3BlobStore({ client: s3.client(), bucket: 'kinds' }), schema: 'kinds' });
  });
});
