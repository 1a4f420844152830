import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch } from './support.js';

const { workspace, dir } = scratch();

describe('a host snapshot taken while the same workspace changes', () => {
  // The scan gives the event loop a turn every few milliseconds, so the workspace's own operations run
  // between its slices. A file moved from a directory not scanned yet into one already listed was in
  // neither listing: the snapshot lacked it, and restoring that snapshot deleted it.
  it('holds a file moved between directories during the scan (nothing is lost to a restore)', async () => {
    const root = dir();
    for (const top of ['a', 'b']) {
      fs.mkdirSync(join(root, top));
      for (let i = 0; i < 1500; i += 1) fs.writeFileSync(join(root, top, `f${i}.txt`), `${top}${i}\n`.repeat(40));
      fs.writeFileSync(join(root, top, 'precious.txt'), `precious from ${top}\n`);
    }
    const ws = workspace({ root });
    let moved: Promise<void> | undefined;
    const snapshot = await ws.snapshot({
      onProgress: ({ path }) => {
        if (moved !== undefined || path === undefined || !/^[ab]\//.test(path)) return;
        // Scanning one directory now: move the other one's file into it, under a name its listing lacks.
        const current = path.slice(0, 1);
        const other = current === 'a' ? 'b' : 'a';
        moved = ws.rename(`${other}/precious.txt`, `${current}/moved-in.txt`);
      },
    });
    expect(moved).toBeDefined();
    await moved;
    // The snapshot holds the state before the move or after it, never a mix of the two.
    const changes = (await ws.diff(snapshot)).map(({ path, status }) => `${status} ${path}`).sort();
    expect([[], ['added a/moved-in.txt', 'deleted b/precious.txt'], ['added b/moved-in.txt', 'deleted a/precious.txt']]).toContainEqual(
      changes,
    );
    await ws.write('a/later.txt', 'later\n');
    await ws.restore(snapshot);
    const kept = ['a', 'b'].flatMap((top) =>
      fs
        .readdirSync(join(root, top))
        .filter((name) => !/^f\d+\.txt$/.test(name))
        .map((name) => fs.readFileSync(join(root, top, name), 'utf8')),
    );
    expect(kept.sort()).toEqual(['precious from a\n', 'precious from b\n']);
  });
});
