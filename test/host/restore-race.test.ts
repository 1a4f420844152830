import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SnapshotRestoreError } from '../../src/workspace/errors.js';
import type { RestoreResult } from '../../src/workspace/types.js';
import { scratch } from './support.js';

/**
 * A restore racing another process that writes into the root. The writer is a real child process that
 * watches a directory (inotify) and answers every removal of a file in it by creating `answer` files of its
 * own, up to `limit` in all. Removing that directory takes the restore a listing, one unlink per entry,
 * then an rmdir: the writer's answers land between the listing and the rmdir, which fails with ENOTEMPTY.
 * Reacting to the restore's own unlinks (rather than writing on a timer) makes the race happen on a
 * loaded machine too, where a timed writer may simply not be scheduled during the window.
 */
const WRITER = `
const fs = require('node:fs');
const [dir, answer, limit] = process.argv.slice(1).map((v, i) => (i === 0 ? v : Number(v)));
let written = 0;
const watcher = fs.watch(dir, (event, name) => {
  if (name === null || fs.existsSync(dir + '/' + name)) return; // a creation (ours, most likely)
  for (let i = 0; i < answer && written < limit; i += 1, written += 1) {
    try { fs.writeFileSync(dir + '/writer-' + written, 'w'); } catch { watcher.close(); return; }
  }
  if (written >= limit) watcher.close();
});
process.stdout.write('go\\n');
`;

async function startWriter(
  root: string,
  options: { answer: number; limit: number },
): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const args = [join(root, RACED), String(options.answer), String(options.limit)];
  const child = spawn(process.execPath, ['-e', WRITER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`writer exited early (${code})`)));
  });
  return { child, exited };
}

/** Every entry under `root`: directories as `/`, files by content, links as `-> target`. */
function tree(root: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const dirent of fs.readdirSync(join(root, rel), { withFileTypes: true })) {
    const path = rel === '' ? dirent.name : `${rel}/${dirent.name}`;
    if (dirent.isDirectory()) {
      out[path] = '/';
      Object.assign(out, tree(root, path));
    } else if (dirent.isSymbolicLink()) out[path] = `-> ${fs.readlinkSync(join(root, path))}`;
    else out[path] = fs.readFileSync(join(root, path), 'utf8');
  }
  return out;
}

const RACED = 'z/c0';

describe('host restore racing another writer', () => {
  const { workspace, dir } = scratch();

  /** A root whose snapshot `before` lacks the directories of RACED, which the live state fills. */
  async function setUp(): Promise<{
    ws: ReturnType<typeof workspace>;
    root: string;
    before: Awaited<ReturnType<ReturnType<typeof workspace>['snapshot']>>;
  }> {
    const root = dir();
    const ws = workspace({ root, gitDir: dir('sessionfs-race-git-') });
    await ws.write('a/f.txt', 'before');
    await ws.write('z/keep.txt', 'kept');
    const before = await ws.snapshot();
    await ws.write('a/f.txt', 'after');
    fs.mkdirSync(join(root, RACED), { recursive: true });
    for (let i = 0; i < 1000; i += 1) fs.writeFileSync(join(root, RACED, `f${i}.txt`), `file ${i}`);
    // Scanned now, so that the restore reaches the directories at once, while the writer runs.
    await ws.snapshot();
    return { ws, root, before };
  }

  it('retries while the writer is busy and ends exact, recording why it retried', async () => {
    const { ws, root, before } = await setUp();
    const expected = { a: '/', 'a/f.txt': 'before', z: '/', 'z/keep.txt': 'kept' };
    // A few answers only: the first attempt fails, a later one wins.
    const writer = await startWriter(root, { answer: 1, limit: 3 });
    const result = await ws.restore(before).finally(() => writer.child.kill('SIGKILL'));
    await writer.exited;
    expect(result.retries?.length ?? 0, 'the writer never got in the way: the race was not exercised').toBeGreaterThan(0);
    expect(result.retries?.map((r) => r.code)).toContain('ENOTEMPTY');
    for (const retry of result.retries ?? []) expect(retry.path).not.toMatch(/^\//);
    expect(tree(root)).toEqual(expected);
    expect(await ws.diff(before)).toEqual([]);
  });

  it('while the writer never stops: wins by retrying or fails with SnapshotRestoreError, and the next restore is exact', async () => {
    const { ws, root, before } = await setUp();
    const after = await ws.snapshot();
    const afterTree = tree(root);
    const writer = await startWriter(root, { answer: 2, limit: 1_000_000 });
    let outcome: unknown;
    try {
      outcome = await ws.restore(before);
    } catch (error) {
      outcome = error;
    } finally {
      writer.child.kill('SIGKILL');
      await writer.exited;
    }
    // Which of the two happens depends on scheduling; neither may be an untyped error or a silent half-restore.
    if (outcome instanceof SnapshotRestoreError) {
      expect(outcome.code).toBe('ESNAPSHOT');
      expect(outcome.attempts.length).toBeGreaterThan(1);
      expect(outcome.attempts.map((a) => a.code)).toContain('ENOTEMPTY');
      expect(outcome.message).not.toContain(root);
    } else {
      expect((outcome as RestoreResult).retries?.map((r) => r.code)).toContain('ENOTEMPTY');
    }

    // The writer is gone (files it wrote last may still be there): both directions restore exactly.
    await ws.restore(after);
    expect(tree(root)).toEqual(afterTree);
    await ws.restore(before);
    expect(tree(root)).toEqual({ a: '/', 'a/f.txt': 'before', z: '/', 'z/keep.txt': 'kept' });
    const again = await ws.snapshot();
    expect(await ws.diff(before, again)).toEqual([]);
  });

  it('forgets cached tree ids of directories a failed restore touched (a failure that is not a race is not retried)', async () => {
    const root = dir();
    const gitDir = dir('sessionfs-race-git-');
    const ws = workspace({ root, gitDir });
    const packs = (): string[] => fs.readdirSync(join(gitDir, 'objects', 'pack')).filter((n) => n.endsWith('.pack'));
    // z/big.txt's blob (and z's tree) go into a pack of their own, which is then lost: restoring a snapshot
    // that needs it fails after `a` was already rewritten.
    await ws.write('z/big.txt', 'only in the lost pack');
    await ws.snapshot();
    const lost = packs();
    await ws.write('a/f.txt', 'before');
    const before = await ws.snapshot();
    await ws.write('a/f.txt', 'after');
    await ws.delete('z/big.txt');
    await ws.write('z/other.txt', 'other');
    const after = await ws.snapshot();
    for (const pack of lost) {
      fs.rmSync(join(gitDir, 'objects', 'pack', pack));
      fs.rmSync(join(gitDir, 'objects', 'pack', pack.replace(/\.pack$/, '.idx')));
    }
    const ws2 = workspace({ root, gitDir });
    await ws2.snapshot();
    const error = await ws2.restore(before).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotRestoreError);
    expect((error as SnapshotRestoreError).attempts).toHaveLength(1);
    expect(fs.readFileSync(join(root, 'a/f.txt'), 'utf8')).toBe('before');
    // The root is part way (a rewritten, z not yet). A snapshot must see that, and restoring the
    // state from before the failed restore must rewrite `a` even though nothing changed since the failure.
    const partWay = await ws2.snapshot();
    expect(await ws2.diff(after, partWay)).toEqual([{ path: 'a/f.txt', status: 'modified' }]);
    await ws2.restore(after);
    expect(tree(root)).toEqual({ a: '/', 'a/f.txt': 'after', z: '/', 'z/other.txt': 'other' });
  });
});
