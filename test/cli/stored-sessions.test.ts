import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { localSessionStore } from '../../src/store/local-store.js';
import { tempDirs } from '../../src/testing/harness.js';
import { assertBuilt } from './support.js';
import { killAndResume, runCliWith, serveSession } from './stored-sessions-support.js';

const tempDir = tempDirs({ prefix: 'sessionfs-stored-' });

/** A store holding the session `demo`: a.txt modified, b.txt added, gone.txt deleted since it began (a fork of `seed`). */
async function storeWithWork(): Promise<string> {
  const store = join(tempDir(), 'store');
  const seed = await serveSession(['--session', 'seed', '--store-dir', store]);
  await seed.call('write_file', { path: 'a.txt', content: 'one\ntwo\nthree\n' });
  await seed.call('write_file', { path: 'gone.txt', content: 'bye\n' });
  await seed.client.close();
  await seed.exited;
  // A fork begins where its parent was (made through the store: `sessionfs` has no fork command).
  const library = localSessionStore({ dir: store });
  await library.acquire('demo', 'maker', 30_000, 'seed');
  await library.release('demo', 'maker');
  const demo = await serveSession(['--session', 'demo', '--store-dir', store]);
  await demo.call('edit_file', { path: 'a.txt', old_string: 'two', new_string: 'TWO' });
  await demo.call('write_file', { path: 'b.txt', content: 'new\n' });
  await demo.call('delete', { path: 'gone.txt' });
  await demo.client.close();
  await demo.exited;
  return store;
}

describe('sessionfs mcp --session and sessionfs sessions (the local store)', () => {
  beforeAll(() => assertBuilt());

  it('keeps the work through a SIGKILL of the server: a new server with the same name resumes it; a second one exits 3', async () => {
    const store = join(tempDir(), 'store');
    await killAndResume(['--session', 'demo', '--store-dir', store]);
    const listed = await runCliWith(['sessions', 'list', '--store-dir', store, '--json']);
    expect(listed.code).toBe(0);
    const [demo] = JSON.parse(listed.stdout) as { name: string; files: number; open: boolean }[];
    expect(demo).toMatchObject({ name: 'demo', files: 3, open: false });
  });

  it('keeps sessions in $XDG_STATE_HOME/sessionfs by default, and sessions reads them there', async () => {
    const state = tempDir();
    const served = await serveSession(['--session', 'default-dir'], { XDG_STATE_HOME: state });
    await served.call('write_file', { path: 'x.txt', content: 'x\n' });
    await served.client.close();
    await served.exited;
    expect(await readdir(join(state, 'sessionfs', 'sessions'))).toEqual(['s-default-dir.json']);
    // One published version after the call, one more as the server stopped.
    const listed = await runCliWith(['sessions', 'list'], { XDG_STATE_HOME: state });
    expect(listed.stdout).toMatch(/^NAME +VERSION +UPDATED +FILES +SIZE +OPEN\ndefault-dir +2 +\d{4}-\S+ +1 +2 B +no\n$/);
    // Nothing is made by a command that only reads: a store that does not exist is an empty one.
    const elsewhere = tempDir();
    expect(await runCliWith(['sessions', 'list'], { XDG_STATE_HOME: elsewhere })).toMatchObject({ code: 0, stdout: 'no sessions\n' });
    expect(existsSync(join(elsewhere, 'sessionfs'))).toBe(false);
  });

  it('list, show and diff say what each session holds and what it changed since it began', async () => {
    const store = await storeWithWork();
    const flags = ['--store-dir', store];
    const list = await runCliWith(['sessions', 'list', ...flags]);
    expect(list.stdout.split('\n').map((line) => line.split(/ +/)[0])).toEqual(['NAME', 'demo', 'seed', '']);

    const show = await runCliWith(['sessions', 'show', 'demo', ...flags]);
    expect(show.code).toBe(0);
    // Each server published after its calls, and once more as it stopped.
    expect(show.stdout).toMatch(/^session demo\n {2}version {5}4\n/);
    expect(show.stdout).toContain('forked from seed');
    expect(show.stdout).toContain('files       2 (');
    expect(show.stdout).toContain('changed     3 files since it began (1 added, 1 modified, 1 deleted)');
    expect(show.stdout).toMatch(/published versions kept \(newest first\):\n {2}v4 {2}\d{4}-.*\n {2}v3 .*\n {2}v2 .*\n {2}v1 /);
    const shown = JSON.parse((await runCliWith(['sessions', 'show', 'demo', '--json', ...flags])).stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({
      name: 'demo',
      version: 4,
      parent: 'seed',
      files: 2,
      open: false,
      changed: { added: 1, modified: 1, deleted: 1 },
    });
    expect(shown.base).toMatch(/^[0-9a-f]{64}$/);

    const diff = await runCliWith(['sessions', 'diff', 'demo', ...flags]);
    expect(diff.stdout).toContain('diff --git a/a.txt b/a.txt');
    expect(diff.stdout).toContain('-two\n+TWO\n');
    expect(diff.stdout).toContain('+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n');
    expect(diff.stdout).toContain('deleted file mode 100644');
    const stat = await runCliWith(['sessions', 'diff', 'demo', '--stat', ...flags]);
    expect(stat.stdout).toBe('M a.txt     +1 -1\nA b.txt     +1 -0\nD gone.txt  +0 -1\n3 files changed, 2 insertions(+), 2 deletions(-)\n');
    const statJson = JSON.parse((await runCliWith(['sessions', 'diff', 'demo', '--json', ...flags])).stdout) as unknown[];
    expect(statJson).toEqual([
      { path: 'a.txt', status: 'modified', insertions: 1, deletions: 1, binary: false },
      { path: 'b.txt', status: 'added', insertions: 1, deletions: 0, binary: false },
      { path: 'gone.txt', status: 'deleted', insertions: 0, deletions: 1, binary: false },
    ]);
    // A session that began empty: everything it holds is its change.
    expect((await runCliWith(['sessions', 'diff', 'seed', '--stat', ...flags])).stdout).toContain('A a.txt     +3 -0');
  });

  it('export writes a patch git apply accepts; write-back --dry-run plans without writing, then applies', async () => {
    const store = await storeWithWork();
    const flags = ['--store-dir', store];
    const host = tempDir();
    const checkout = join(host, 'checkout');
    await mkdir(checkout);
    await writeFile(join(checkout, 'a.txt'), 'one\ntwo\nthree\n');
    await writeFile(join(checkout, 'gone.txt'), 'bye\n');

    const patchFile = join(host, 'demo.patch');
    const exported = await runCliWith(['sessions', 'export', 'demo', '--patch-out', patchFile, ...flags]);
    expect(exported).toMatchObject({ code: 0, stderr: `sessionfs: wrote the patch of session "demo" (3 files changed) to ${patchFile}\n` });
    const applied = join(host, 'applied');
    await mkdir(applied);
    await writeFile(join(applied, 'a.txt'), 'one\ntwo\nthree\n');
    await writeFile(join(applied, 'gone.txt'), 'bye\n');
    execFileSync('git', ['apply', '--binary', patchFile], { cwd: applied });
    expect(await readFile(join(applied, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    expect((await readdir(applied)).sort()).toEqual(['a.txt', 'b.txt']);
    const missingDir = await runCliWith(['sessions', 'export', 'demo', '--patch-out', join(host, 'no/such/dir.patch'), ...flags]);
    expect(missingDir).toMatchObject({ code: 2, stderr: expect.stringContaining('its directory does not exist') });

    const plan = await runCliWith(['sessions', 'write-back', 'demo', '--to', checkout, '--dry-run', ...flags]);
    expect(plan).toMatchObject({ code: 0, stdout: 'would write   a.txt\nwould write   b.txt\nwould delete  gone.txt\n' });
    expect((await readdir(checkout)).sort()).toEqual(['a.txt', 'gone.txt']);
    expect(await readFile(join(checkout, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');

    // A file changed on the host since the session began is a conflict: nothing is written (exit 1).
    await writeFile(join(checkout, 'gone.txt'), 'edited on the host\n');
    const refused = await runCliWith(['sessions', 'write-back', 'demo', '--to', checkout, ...flags]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('conflict      gone.txt');
    expect(refused.stderr).toContain('nothing was written');
    expect((await readdir(checkout)).sort()).toEqual(['a.txt', 'gone.txt']);
    const skipped = await runCliWith(['sessions', 'write-back', 'demo', '--to', checkout, '--on-conflict', 'skip', '--json', ...flags]);
    expect(skipped.code).toBe(0);
    expect(JSON.parse(skipped.stdout)).toMatchObject({
      written: ['a.txt', 'b.txt'],
      deleted: [],
      conflicts: [{ path: 'gone.txt' }],
      dryRun: false,
    });
    expect(await readFile(join(checkout, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    expect(await readFile(join(checkout, 'gone.txt'), 'utf8')).toBe('edited on the host\n');
  });

  it('rm refuses a session a server holds (exit 3) unless --force; gc then frees what only it used', async () => {
    const store = join(tempDir(), 'store');
    const flags = ['--store-dir', store];
    const keep = await serveSession(['--session', 'keep', ...flags]);
    await keep.call('write_file', { path: 'kept.txt', content: 'kept\n' });
    await keep.client.close();
    await keep.exited;
    const held = await serveSession(['--session', 'held', ...flags]);
    await held.call('write_file', { path: 'only-here.txt', content: 'unique content of held\n' });

    const refused = await runCliWith(['sessions', 'rm', 'held', ...flags]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/session "held" is open in another process \(its lease is held until \d{4}-.*give --force/);
    expect(JSON.parse((await runCliWith(['sessions', 'list', '--json', ...flags])).stdout)).toHaveLength(2);
    const forced = await runCliWith(['sessions', 'rm', 'held', '--force', ...flags]);
    expect(forced).toMatchObject({ code: 0, stderr: expect.stringContaining('removed session "held"') });
    // The server that held it can publish no more: its next change fails, and says why.
    expect(await held.call('write_file', { path: 'late.txt', content: 'late\n' })).toMatchObject({
      isError: true,
      text: expect.stringContaining('no longer exists'),
    });
    await held.client.close();
    await held.exited;
    expect(JSON.parse((await runCliWith(['sessions', 'list', '--json', ...flags])).stdout)).toMatchObject([{ name: 'keep' }]);
    expect(await runCliWith(['sessions', 'rm', 'held', ...flags])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no session named "held"'),
    });

    const blobCount = async () => {
      let count = 0;
      for (const folder of await readdir(join(store, 'blobs'))) count += (await readdir(join(store, 'blobs', folder))).length;
      return count;
    };
    const before = await blobCount();
    const young = await runCliWith(['sessions', 'gc', '--json', ...flags]);
    expect(JSON.parse(young.stdout)).toMatchObject({ deleted: 0 });
    expect(JSON.parse(young.stdout).pending).toBeGreaterThan(0);
    const freed = await runCliWith(['sessions', 'gc', '--grace-ms', '0', ...flags]);
    expect(freed.code).toBe(0);
    const deleted = Number(/^deleted (\d+) blobs? no session reaches; 0 more unreachable/.exec(freed.stdout)?.[1]);
    expect(deleted).toBeGreaterThan(0);
    expect(await blobCount()).toBe(before - deleted);
    const kept = await serveSession(['--session', 'keep', '--read-only', ...flags]);
    expect((await kept.call('read_file', { path: 'kept.txt' })).text).toContain('kept');
    await kept.client.close();
    await kept.exited;
  });

  it('refuses bad names and flags with exit 2, naming them', async () => {
    const store = join(tempDir(), 'store');
    const cases: [string[], string][] = [
      [['mcp', '--session', 'a/b', '--store-dir', store], "--session must not contain '/'"],
      [['mcp', '--session', '..', '--store-dir', store], "--session must not be '..'"],
      [['mcp', '--session', 'x'.repeat(10_000), '--store-dir', store], '--session must be at most 1024 characters'],
      [['mcp', '--session', '', '--store-dir', store], '--session must be a non-empty string'],
      [
        ['mcp', '--session', 'ok', '--root', store],
        '--session serves the workspace kept in the session store: it cannot be used with --root',
      ],
      [['mcp', '--session', 'ok', '--backend', 'host'], 'cannot be used with --backend'],
      [['mcp', '--session', 'ok', '--overlay', '--mount', store, '--allow', store], 'cannot be used with --overlay'],
      [['mcp', '--session', 'ok', '--mount', store + ':ro', '--allow', store], 'a :ro mount'],
      [
        ['mcp', '--session', 'ok', '--mount', store, '--allow', store, '--write-back'],
        'seeds a new stored session: it cannot be used with --write-back (write a stored session back with sessionfs sessions write-back)',
      ],
      [['mcp', '--session', 'ok', '--mount', store, '--allow', store, '--read-only'], 'it cannot be used with --read-only'],
      [['mcp', '--include-ignored'], '--include-ignored applies to the mounts: give at least one --mount'],
      [['mcp', '--overlay', '--mount', store, '--allow', store, '--include-ignored'], '--include-ignored: --overlay copies nothing'],
      [['mcp', '--store-dir', store], '--store-dir names where --session keeps its session: give --session NAME'],
      [['mcp', '--session', 'ok', '--store-dir', store, '--store', 'postgres://x/y'], '--store-dir and --store name two stores'],
      [['mcp', '--session', 'ok', '--store', 'mysql://x/y', '--s3', 's3://bucket'], '--store must be a postgres://'],
      [['mcp', '--session', 'ok', '--store', 'postgres://u:secret@x/y'], 'give --s3 s3://bucket/prefix'],
      [['mcp', '--session', 'ok', '--store', 'postgres://x/y', '--s3', 'http://bucket'], '--s3 must be s3://bucket'],
      [['mcp', '--session', 'ok', '--s3', 's3://bucket'], '--s3 holds the blobs of a --store'],
      [['mcp', '--stat'], '--stat is an option of the sessions command, not of mcp'],
      [['sessions'], 'sessions needs an action'],
      [['sessions', 'frobnicate'], 'unknown sessions action "frobnicate"'],
      [['sessions', 'show'], "sessions show needs the session's NAME"],
      [['sessions', 'show', 'a', 'b'], 'unexpected argument "b"'],
      [['sessions', 'show', 'a\\b'], "the session NAME must not contain '/' or '\\'"],
      [['sessions', 'list', '--stat'], '--stat is not an option of sessions list'],
      [['sessions', 'rm', 'x', '--dry-run'], '--dry-run is not an option of sessions rm'],
      [['sessions', 'export', 'x'], 'sessions export needs --patch-out FILE'],
      [['sessions', 'write-back', 'x'], 'sessions write-back needs --to DIR'],
      [['sessions', 'write-back', 'x', '--to', store, '--on-conflict', 'merge'], '--on-conflict must be fail, skip or overwrite'],
      [['sessions', 'gc', '--grace-ms', 'soon'], '--grace-ms must be a whole number'],
      [['demo', '--session', 'x'], '--session is an option of the mcp command, not of demo'],
    ];
    for (let start = 0; start < cases.length; start += 6) {
      const batch = cases.slice(start, start + 6);
      const results = await Promise.all(batch.map(([args]) => runCliWith(args)));
      batch.forEach(([args, message], index) => {
        const result = results[index]!;
        const shown = args.join(' ').slice(0, 80);
        expect({ args: shown, code: result.code, stderr: result.stderr }).toMatchObject({
          args: shown,
          code: 2,
          stderr: expect.stringContaining(message),
        });
        expect(result.stderr).not.toContain('secret');
      });
    }
    // A store directory that is not a store is refused at start, naming the flag; nothing in it is touched.
    const notAStore = tempDir();
    await writeFile(join(notAStore, 'mine.txt'), 'mine\n');
    const refused = await runCliWith(['sessions', 'list', '--store-dir', notAStore]);
    expect(refused).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`--store-dir ${JSON.stringify(notAStore)}: the store directory is not empty`),
    });
    expect(await readdir(notAStore)).toEqual(['mine.txt']);
    expect(await runCliWith(['sessions', 'show', 'nobody', '--store-dir', store])).toMatchObject({
      code: 1,
      stderr: 'sessionfs: no session named "nobody" in the local store\n',
    });
  });
});
