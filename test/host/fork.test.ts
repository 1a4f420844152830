import { execFileSync } from 'node:child_process';
import fsModule, * as fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { PIN_DIRECTORIES } from '../../src/host-files/sandbox.js';
import { scratch, hostOf } from './support.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';

describe('fork of a host workspace', () => {
  const { workspace, dir } = scratch();

  it('copies the root (exec bits, links as links, empty directories) into a temp root it owns', async () => {
    const outside = dir('fork-outside-');
    fs.writeFileSync(join(outside, 'secret.txt'), 'outside');
    const root = dir('fork-root-');
    const parent = workspace({ root });
    await parent.write('bin/run.sh', '#!/bin/sh\necho hi\n');
    fs.chmodSync(join(root, 'bin/run.sh'), 0o755);
    fs.symlinkSync('run.sh', join(root, 'bin/link'));
    fs.symlinkSync(join(outside, 'secret.txt'), join(root, 'escape'));
    await parent.mkdir('empty/inner');
    const before = await parent.snapshot();

    const fork = await parent.fork();
    try {
      expect(fork.root).not.toBe(root);
      expect(hostOf(fork).gitDir).not.toBe(hostOf(parent).gitDir);
      expect(fs.statSync(join(fork.root, 'bin/run.sh')).mode & 0o777).toBe(0o755);
      expect(fs.readlinkSync(join(fork.root, 'bin/link'))).toBe('run.sh');
      // A link that leaves the root is copied as the link it is, never followed.
      expect(fs.lstatSync(join(fork.root, 'escape')).isSymbolicLink()).toBe(true);
      expect(fs.statSync(join(fork.root, 'empty/inner')).isDirectory()).toBe(true);
      expect(await fork.patch(before)).toBe('');
      // The parent's root is left as it was.
      await fork.write('bin/run.sh', 'changed');
      expect(fs.readFileSync(join(root, 'bin/run.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    } finally {
      await fork.dispose();
    }
    expect(fs.existsSync(fork.root)).toBe(false);
    expect(fs.existsSync(hostOf(fork).gitDir)).toBe(false);
    expect(fs.existsSync(root)).toBe(true);
  });

  it.runIf(PIN_DIRECTORIES)(
    'copies each file as a reflink where the filesystem has them (COPYFILE_FICLONE, a plain copy elsewhere)',
    async () => {
      const parent = workspace();
      await parent.write('a.txt', 'one\n');
      await parent.write('d/b.txt', 'two\n');
      // The copy is synchronous: spy on the module's copyFileSync (and let its ESM namespace see the spy).
      const copyFile = vi.spyOn(fsModule, 'copyFileSync');
      syncBuiltinESMExports();
      try {
        const fork = await parent.fork();
        await fork.dispose();
        const flags = copyFile.mock.calls.map((call) => call[2] ?? 0);
        expect(flags).toHaveLength(2);
        for (const flag of flags) {
          expect(flag & fs.constants.COPYFILE_FICLONE).toBe(fs.constants.COPYFILE_FICLONE);
          // Never COPYFILE_FICLONE_FORCE: on a filesystem without reflinks (ext4, tmpfs) the fork still works.
          expect(flag & fs.constants.COPYFILE_FICLONE_FORCE).toBe(0);
        }
      } finally {
        copyFile.mockRestore();
        syncBuiltinESMExports();
      }
    },
  );

  it('shares the snapshot objects through git alternates: native git reads the parent history in the fork', async () => {
    const parent = workspace();
    await parent.write('a.txt', 'one\n');
    const early = await parent.snapshot();
    const fork = await parent.fork();
    try {
      expect(fs.readFileSync(join(hostOf(fork).gitDir, 'objects/info/alternates'), 'utf8')).toBe(
        `${join(hostOf(parent).gitDir, 'objects')}\n`,
      );
      const packs = fs.readdirSync(join(hostOf(fork).gitDir, 'objects/pack'));
      expect(packs).toEqual([]); // nothing copied
      const shown = execFileSync('git', ['--git-dir', hostOf(fork).gitDir, 'show', `${early.ref}:a.txt`], { encoding: 'utf8' });
      expect(shown).toBe('one\n');
    } finally {
      await fork.dispose();
    }
  });

  it("keeps a disposed parent's owned git dir until the last fork borrowing it is disposed", async () => {
    const parent = createWorkspace(hostDriver());
    await parent.write('a.txt', 'one');
    const early = await parent.snapshot();
    const fork = await parent.fork();
    const second = await fork.fork();
    await parent.dispose();
    expect(fs.existsSync(parent.root)).toBe(false);
    expect(fs.existsSync(hostOf(parent).gitDir)).toBe(true);
    await fork.dispose();
    expect(fs.existsSync(hostOf(parent).gitDir)).toBe(true);
    expect(fs.existsSync(hostOf(fork).gitDir)).toBe(true);
    await second.write('a.txt', 'two');
    await second.restore(early);
    expect((await second.read('a.txt')).content).toBe('one');
    await second.dispose();
    expect(fs.existsSync(hostOf(parent).gitDir)).toBe(false);
    expect(fs.existsSync(hostOf(fork).gitDir)).toBe(false);
  });

  it('keeps exclude, change detection, limits and the read-only state', async () => {
    const parent = workspace({ exclude: ['cache/**'], changeDetection: 'tracked', limits: { maxWriteBytes: 64 } });
    await parent.write('cache/x', 'x');
    parent.seal();
    const fork = await parent.fork();
    try {
      expect(hostOf(fork).exclude).toEqual(['cache/**']);
      expect(hostOf(fork).changeDetection).toBe('tracked');
      expect(fork.limits.maxWriteBytes).toBe(64);
      expect(fork.readOnly).toBe(true);
    } finally {
      await fork.dispose();
    }
  });
});
