import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DESCRIPTORS, PIN_DIRECTORIES, pinDirectory, Sandbox, type PinnedDir } from '../../src/host-files/sandbox.js';
import { tempDirs } from '../../src/testing/harness.js';
import { matchPool } from '../../src/workspace/search/match-pool.js';

const tempDir = tempDirs({ prefix: 'sessionfs-worker-reads-' });

/** The worker's matches for files it reads itself, each named through the pin of `root`. */
async function grepPinned(root: string, names: string[], pattern = 'TODO'): Promise<{ file: number; lineNumber: number }[]> {
  const pin: PinnedDir = pinDirectory(new Sandbox(root), '', '');
  try {
    const needle = pattern === 'TODO' ? new TextEncoder().encode('TODO') : undefined;
    const job = { pattern, flags: 'u', maxMatches: 100, needle, files: names.map((name) => pin.at(name)) };
    const { matches } = await matchPool.matchLines(job, new AbortController().signal);
    return matches.map(({ file, lineNumber }) => ({ file, lineNumber }));
  } finally {
    pin.release();
  }
}

/**
 * A search worker reads a file the walk listed as regular by name in its pinned directory, without asking
 * its kind first (a stat per file cost more than reading a small one). Whatever stands at that name by then
 * (the walk and the read race with other writers) is refused unless it is a regular file, and nothing is
 * taken from it on the way.
 */
describe.skipIf(!PIN_DIRECTORIES)('search workers read only regular files', () => {
  it('refuses a FIFO standing where a file was listed, and takes no byte from its writer', async () => {
    const root = tempDir();
    fs.writeFileSync(join(root, 'a.txt'), 'TODO first\n');
    execFileSync('mkfifo', [join(root, 'pipe.txt')]);
    // Read and write ends at once: the worker's open does not block, and what was written waits in the pipe.
    const fd = fs.openSync(join(root, 'pipe.txt'), fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    try {
      fs.writeSync(fd, 'TODO from the pipe\n');
      expect(await grepPinned(root, ['pipe.txt', 'a.txt'])).toEqual([{ file: 1, lineNumber: 1 }]);
      const left = Buffer.alloc(64);
      expect(left.toString('utf8', 0, fs.readSync(fd, left))).toBe('TODO from the pipe\n');
    } finally {
      fs.closeSync(fd);
    }
  });

  it('refuses a directory or a link standing where a file was listed', async () => {
    const root = tempDir();
    fs.mkdirSync(join(root, 'dir.txt'));
    fs.writeFileSync(join(root, 'real.txt'), 'TODO real\n');
    fs.symlinkSync('real.txt', join(root, 'link.txt'));
    expect(await grepPinned(root, ['dir.txt', 'link.txt', 'real.txt'])).toEqual([{ file: 2, lineNumber: 1 }]);
  });

  it('refuses an endless device once it fills the scratch buffer', async () => {
    const root = tempDir();
    try {
      execFileSync('mknod', [join(root, 'zero.txt'), 'c', '1', '5'], { stdio: 'ignore' }); // /dev/zero's numbers
    } catch {
      return; // not permitted here: nothing to check
    }
    fs.writeFileSync(join(root, 'after.txt'), 'TODO after\n');
    // Its NULs would be lines of text (valid UTF-8, no needle to skip them): matched, were it read.
    expect(await grepPinned(root, ['zero.txt', 'after.txt'], '\\0|TODO')).toEqual([{ file: 1, lineNumber: 1 }]);
  });

  it('reads files around the scratch buffer size whole', async () => {
    const root = tempDir();
    const scratch = 1 << 20;
    for (const size of [scratch - 1, scratch, scratch + 1, 3 * scratch]) {
      const tail = `\nTODO at ${size}\n`;
      fs.writeFileSync(join(root, `f${size}.txt`), `${'x'.repeat(size - tail.length)}${tail}`);
      expect(fs.statSync(join(root, `f${size}.txt`)).size).toBe(size);
    }
    expect(
      await grepPinned(
        root,
        [scratch - 1, scratch, scratch + 1, 3 * scratch].map((size) => `f${size}.txt`),
      ),
    ).toEqual([
      { file: 0, lineNumber: 2 },
      { file: 1, lineNumber: 2 },
      { file: 2, lineNumber: 2 },
      { file: 3, lineNumber: 2 },
    ]);
  });

  it("names pinned directories through this process's own /proc entry when /proc is this pid namespace's", () => {
    const ours = fs.readlinkSync('/proc/self') === String(process.pid);
    expect(DESCRIPTORS).toBe(ours ? `/proc/${process.pid}/fd` : '/proc/self/fd');
    const root = tempDir();
    const pin = pinDirectory(new Sandbox(root), '', '');
    try {
      expect(pin.path.startsWith(`${DESCRIPTORS}/`)).toBe(true);
      expect(fs.realpathSync(pin.path)).toBe(root);
    } finally {
      pin.release();
    }
  });
});
