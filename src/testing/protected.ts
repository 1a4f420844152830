import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hydrate } from '../sources/hydrate.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { bytes, contentsOf, expectError, tempDirs, workspaces, type ComplianceHarness } from './harness.js';

/** A host repository: what hydration brings in with `includeGit: 'read-only'`. */
const REPOSITORY: Record<string, string> = {
  '.git/config': '[core]\n\tbare = false\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
  '.git/hooks/pre-commit.sample': '#!/bin/sh\n',
  'src/a.ts': 'export const a = 1;\n',
};

const text = async (ws: SnapshotableWorkspace, path: string): Promise<string> => Buffer.from((await ws.readBytes(path)).content).toString();

/**
 * The `protect` rule (docs/security-model.md): version-control internals the host provided are readable
 * and read-only to every mutation (`PolicyError`, `EPERM`, naming the rule, nothing changed), and restores
 * leave them as they are; what the workspace creates itself is ordinary content.
 */
export function protectedPaths(harness: ComplianceHarness): void {
  describe('protected paths (version-control internals from the host)', () => {
    const create = workspaces(harness);
    const tempDir = tempDirs({ prefix: 'sessionfs-protect-' });

    /** A workspace (a fresh one by default) holding the host repository at `repo`, hydrated read-only. */
    const withRepository = async (ws?: SnapshotableWorkspace): Promise<SnapshotableWorkspace> => {
      const host = tempDir();
      for (const [path, text] of Object.entries(REPOSITORY)) {
        mkdirSync(dirname(join(host, path)), { recursive: true });
        writeFileSync(join(host, path), text);
      }
      ws ??= await create();
      const result = await hydrate(ws, [{ hostPath: host, path: 'repo', includeGit: 'read-only' }], { allowedHostRoots: [host] });
      expect(result.skipped).toEqual([]);
      return ws;
    };

    const refused = async (action: Promise<unknown>): Promise<void> => {
      const error = await expectError(action, 'PolicyError', 'EPERM');
      expect(error.message).toContain("protect rule '**/.git/**'");
    };

    it('reads host-provided .git content, and refuses every mutation of it with EPERM naming the rule, changing nothing', async () => {
      const ws = await withRepository();
      expect(await text(ws, 'repo/.git/config')).toBe(REPOSITORY['.git/config']);
      const before = await contentsOf(ws);
      await refused(ws.write('repo/.git/config', '[core]\n\tfsmonitor = "touch pwned"\n'));
      await refused(ws.write('repo/.git/config', 'x', { mode: 'append' }));
      await refused(ws.write('repo/.git/hooks/post-checkout', '#!/bin/sh\ntouch pwned\n'));
      await refused(ws.writeBytes('repo/.git/HEAD', bytes('x')));
      await refused(ws.delete('repo/.git/config'));
      await refused(ws.delete('repo/.git', { recursive: true }));
      await refused(ws.delete('repo', { recursive: true }));
      await refused(ws.mkdir('repo/.git/hooks/more'));
      await refused(ws.rename('repo/.git', 'elsewhere'));
      await refused(ws.rename('repo', 'moved'));
      await refused(ws.rename('repo/src/a.ts', 'repo/.git/hooks/pre-commit'));
      await refused(ws.copy('repo/src/a.ts', 'repo/.git/config', { overwrite: true }));
      const writeFiles = ws.writeFiles?.bind(ws);
      if (writeFiles !== undefined) await refused(writeFiles([{ kind: 'file', path: 'repo/.git/info/exclude', content: bytes('x') }]));
      const openStream = ws.createWriteStream?.bind(ws);
      if (openStream !== undefined) await refused(openStream('repo/.git/config'));
      expect(await contentsOf(ws)).toEqual(before);
    });

    it('refuses a change reaching host .git content through a link, and changes of its kinds', async () => {
      if (harness.fileKinds === false) return;
      const ws = await withRepository();
      await ws.symlink('repo/.git', 'g');
      await ws.symlink('repo/.git/config', 'cfg');
      const before = await contentsOf(ws);
      await refused(ws.write('g/config', '[core]\n\tfsmonitor = "touch pwned"\n'));
      await refused(ws.write('cfg', 'x'));
      await refused(ws.write('g/hooks/post-checkout', '#!/bin/sh\ntouch pwned\n', { executable: true }));
      await refused(ws.setExecutable('g/hooks/pre-commit.sample', true));
      await refused(ws.setExecutable('repo/.git/hooks/pre-commit.sample', true));
      await refused(ws.symlink('/etc/passwd', 'repo/.git/hooks/pre-push'));
      await refused(ws.symlink('x', 'g/hooks/pre-push'));
      expect(await contentsOf(ws)).toEqual(before);
      expect((await ws.stat('repo/.git/hooks/pre-commit.sample')).executable).toBe(false);
    });

    it('lets the workspace read and copy out host .git content, and work freely in a .git it creates itself', async () => {
      const ws = await withRepository();
      await ws.copy('repo/.git', 'backup/.git', { recursive: true });
      expect(await text(ws, 'backup/.git/config')).toBe(REPOSITORY['.git/config']);
      await ws.write('backup/.git/config', 'changed');
      await ws.mkdir('fresh/.git/hooks');
      await ws.write('fresh/.git/config', '[core]\n');
      await ws.rename('fresh/.git/config', 'fresh/.git/config.old');
      await ws.delete('fresh', { recursive: true });
      expect(await ws.exists('fresh')).toBe(false);
    });

    it('restores never rewrite host-provided .git content: it is left as it is and listed in skipped', async () => {
      const ws = await create();
      const empty = await ws.snapshot();
      await withRepository(ws);
      await ws.write('repo/src/b.ts', 'b');
      const before = await ws.snapshot();
      await ws.write('repo/src/b.ts', 'changed');
      await ws.delete('repo/src/a.ts');
      expect((await ws.restore(before)).skipped).toEqual([]);
      expect(await contentsOf(ws, 'repo/src')).toEqual({ 'repo/src/a.ts': REPOSITORY['src/a.ts'], 'repo/src/b.ts': 'b' });
      // A snapshot from before the repository was there restores everything else, never its .git.
      const result = await ws.restore(empty);
      expect(await ws.exists('repo/src')).toBe(false);
      expect(await text(ws, 'repo/.git/config')).toBe(REPOSITORY['.git/config']);
      expect(result.skipped.map((entry) => entry.path)).toContain('repo/.git');
      expect(result.skipped.find((entry) => entry.path === 'repo/.git')?.reason).toMatch(/protected/);
      // The restore could not make the snapshot's tree: its receipt says so.
      expect(result.receipt?.matches).toBe(false);
    });

    it('a dry-run restore lists protected paths as blocked, and changes nothing', async () => {
      const ws = await create();
      const empty = await ws.snapshot();
      await withRepository(ws);
      const before = await contentsOf(ws);
      const { preview } = await ws.restore(empty, { dryRun: true });
      expect(preview?.blocked.map((entry) => entry.path)).toContain('repo/.git');
      expect(preview?.blocked.find((entry) => entry.path === 'repo/.git')?.reason).toMatch(/protected/);
      expect(preview?.deleted).toContain('repo/src/a.ts');
      expect(preview?.deleted.some((path) => path.includes('.git/'))).toBe(false);
      expect(await contentsOf(ws)).toEqual(before);
    });
  });
}
