import * as realFs from 'node:fs';
import { readFileSync, readlinkSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { tempDirs } from '../../src/testing/harness.js';

// Some filesystems (older XFS, some network and FUSE ones) list entries without their type (DT_UNKNOWN):
// node's Dirent then answers false to isFile, isDirectory and isSymbolicLink alike. Such listings are
// simulated here for every directory under a marker name.
const MARK = 'sessionfs-untyped-';
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const untyped = (dirent: import('node:fs').Dirent) =>
    Object.assign(Object.create(Object.getPrototypeOf(dirent) as object) as import('node:fs').Dirent, dirent, {
      isFile: () => false,
      isDirectory: () => false,
      isSymbolicLink: () => false,
    });
  const readdirSync = ((path: import('node:fs').PathLike, options?: unknown) => {
    const listing = fs.readdirSync(path, options as never) as unknown[];
    const typed = typeof options === 'object' && options !== null && (options as { withFileTypes?: boolean }).withFileTypes === true;
    // A pinned directory is listed by its descriptor's /proc name: judge it by where that leads.
    const where = /^\/proc\/(?:self|\d+)\/fd\//.test(String(path)) ? fs.readlinkSync(path) : String(path);
    if (!typed || !where.includes(MARK)) return listing;
    return (listing as import('node:fs').Dirent[]).map(untyped);
  }) as typeof fs.readdirSync;
  return { ...fs, readdirSync, default: { ...fs, readdirSync } };
});

const { copyRoot } = await import('../../src/backends/host/fork.js');

const scratch = tempDirs({ prefix: MARK });

it('a host fork copies files, links and directories from a listing that does not give entry types', async () => {
  const source = scratch();
  mkdirSync(join(source, 'src', 'deep'), { recursive: true });
  writeFileSync(join(source, 'a.txt'), 'A');
  writeFileSync(join(source, 'src', 'deep', 'b.txt'), 'B');
  symlinkSync('a.txt', join(source, 'link'));
  expect(realFs.readdirSync(source, { withFileTypes: true }).every((d) => !d.isFile() && !d.isDirectory())).toBe(true);
  const target = scratch();
  await copyRoot(source, target);
  expect(readFileSync(join(target, 'a.txt'), 'utf8')).toBe('A');
  expect(readFileSync(join(target, 'src', 'deep', 'b.txt'), 'utf8')).toBe('B');
  expect(readlinkSync(join(target, 'link'))).toBe('a.txt');
});
