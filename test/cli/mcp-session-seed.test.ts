import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../../src/testing/harness.js';
import { assertBuilt } from './support.js';
import { runCliWith, serveSession } from './stored-sessions-support.js';

const tempDir = tempDirs({ prefix: 'sessionfs-session-seed-' });

/** A git project whose .gitignore ignores its node_modules, inside an allowed root `base`. */
function project(): { base: string; project: string } {
  const base = tempDir();
  const dir = join(base, 'project');
  for (const [path, text] of Object.entries({
    '.gitignore': 'node_modules/\n',
    'src/app.ts': 'export const app = 1;\n',
    'node_modules/dep/index.js': 'module.exports = 1;\n',
  })) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  expect(spawnSync('git', ['init', '-q', dir]).status).toBe(0);
  return { base, project: dir };
}

describe('sessionfs mcp --session NAME --mount …: a new stored session seeded from host folders', () => {
  beforeAll(() => assertBuilt());

  it('seeds a new session from the mounts, keeps the work through a SIGKILL, and resumes it without reading the mounts again', async () => {
    const { base, project: dir } = project();
    const store = join(tempDir(), 'store');
    const args = ['--session', 'seeded', '--store-dir', store, '--mount', dir, '--allow', base];

    const first = await serveSession(args);
    expect((await first.call('read_file', { path: 'project/src/app.ts' })).text).toContain('export const app = 1;');
    // Seeding follows hydration's rules: what .gitignore ignores and .git stay out.
    const listed = await first.call('glob', { pattern: 'project/**', include_ignored: true });
    expect(listed.text).toContain('project/src/app.ts');
    expect(listed.text).not.toContain('node_modules');
    expect((await first.call('read_file', { path: 'project/.gitignore' })).isError).toBe(false);
    expect((await first.call('read_file', { path: 'project/.git/HEAD' })).isError).toBe(true);
    expect(await first.call('write_file', { path: 'project/src/new.ts', content: 'export const added = true;\n' })).toMatchObject({
      isError: false,
    });
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    await first.client.close().catch(() => undefined);

    // The host folder changes meanwhile: a resumed session is the stored one, not a new copy of the mounts.
    writeFileSync(join(dir, 'src/app.ts'), 'export const app = 2;\n');
    const second = await serveSession(args);
    try {
      expect((await second.call('read_file', { path: 'project/src/new.ts' })).text).toContain('added = true');
      expect((await second.call('read_file', { path: 'project/src/app.ts' })).text).toContain('export const app = 1;');
      expect(second.stderr()).toContain('sessionfs: --session "seeded" exists: resumed as stored; the --mount folders were not read again');
      expect(second.stderr()).not.toContain(base);
    } finally {
      await second.client.close();
      await second.exited;
    }

    // The seed is where the session began: its change is the model's work only.
    const diff = await runCliWith(['sessions', 'diff', 'seeded', '--store-dir', store, '--stat']);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('project/src/new.ts');
    expect(diff.stdout).not.toContain('app.ts');
  });

  it('--include-ignored seeds what .gitignore ignores too (never .git)', async () => {
    const { base, project: dir } = project();
    const store = join(tempDir(), 'store');
    const served = await serveSession(['--session', 'all', '--store-dir', store, '--mount', dir, '--allow', base, '--include-ignored']);
    try {
      expect((await served.call('read_file', { path: 'project/node_modules/dep/index.js' })).text).toContain('module.exports = 1;');
      expect((await served.call('read_file', { path: 'project/.git/HEAD' })).isError).toBe(true);
    } finally {
      await served.client.close();
      await served.exited;
    }
  });

  it('without --session, a copy leaves ignored files out unless --include-ignored (shown in place, they are all there)', async () => {
    const { base, project: dir } = project();
    const plain = await serveSession(['--backend', 'memory', '--mount', dir, '--allow', base]);
    const all = await serveSession(['--mount', dir, '--allow', base, '--include-ignored']);
    try {
      expect((await plain.call('read_file', { path: 'project/node_modules/dep/index.js' })).isError).toBe(true);
      expect((await all.call('read_file', { path: 'project/node_modules/dep/index.js' })).text).toContain('module.exports = 1;');
    } finally {
      await plain.client.close();
      await all.client.close();
    }
  });
});
