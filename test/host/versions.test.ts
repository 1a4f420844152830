import * as fs from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { expectError } from '../../src/testing/harness.js';
import { scratch } from './support.js';
import { type ManagedWorkspace } from '../../src/workspace/create-workspace.js';

/** Longer than a filesystem timestamp tick: changes made within one tick are not told apart (see hostFileVersion). */
const TICK_MS = 25;

async function versionOf(ws: ManagedWorkspace, path: string): Promise<number> {
  return (await ws.stat(path)).version as number;
}

describe('host stat().version sees changes made behind the workspace', () => {
  const { workspace, dir } = scratch();

  it('changes after an outside write in place, an append, a replacing rename and a touch', async () => {
    const ws = workspace();
    await ws.write('a.txt', 'one');
    const seen = new Set([await versionOf(ws, 'a.txt')]);
    const outside = [
      () => fs.writeFileSync(join(ws.root, 'a.txt'), 'two'), // same size, same inode
      () => fs.appendFileSync(join(ws.root, 'a.txt'), '!'),
      () => {
        fs.writeFileSync(join(ws.root, 'new.tmp'), 'thre');
        fs.renameSync(join(ws.root, 'new.tmp'), join(ws.root, 'a.txt'));
      },
      () => fs.utimesSync(join(ws.root, 'a.txt'), new Date(2001, 1, 1), new Date(2001, 1, 1)),
    ];
    for (const change of outside) {
      await sleep(TICK_MS);
      change();
      const version = await versionOf(ws, 'a.txt');
      expect(seen.has(version)).toBe(false);
      seen.add(version);
    }
    expect(await versionOf(ws, 'a.txt')).toBe(await versionOf(ws, 'a.txt'));
  });

  it('refuses an ifVersion write over an outside change and keeps what the other program wrote', async () => {
    const ws = workspace();
    await ws.write('notes.md', 'mine');
    const seen = await versionOf(ws, 'notes.md');
    await sleep(TICK_MS);
    fs.writeFileSync(join(ws.root, 'notes.md'), 'THEM');
    await expectError(ws.write('notes.md', 'lost', { ifVersion: seen }), 'ConflictError', 'ECONFLICT', { hostPaths: [] });
    expect(fs.readFileSync(join(ws.root, 'notes.md'), 'utf8')).toBe('THEM');
    await ws.write('notes.md', 'merged', { ifVersion: await versionOf(ws, 'notes.md') });
    expect(fs.readFileSync(join(ws.root, 'notes.md'), 'utf8')).toBe('merged');
  });

  it('tells apart quick writes of one size that reuse inodes within one timestamp tick', async () => {
    const ws = workspace();
    const versions = new Set<number>();
    for (let round = 0; round < 20; round += 1) {
      await ws.write('q.txt', round % 2 === 0 ? 'aa' : 'bb');
      versions.add(await versionOf(ws, 'q.txt'));
    }
    expect(versions.size).toBe(20);
  });

  it('gives two workspaces on one root the same version for an unchanged file', async () => {
    const root = dir();
    fs.writeFileSync(join(root, 'shared.txt'), 'x');
    const first = workspace({ root });
    const second = workspace({ root });
    expect(await versionOf(first, 'shared.txt')).toBe(await versionOf(second, 'shared.txt'));
  });
});
