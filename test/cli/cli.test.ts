import { spawnSync } from 'node:child_process';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/args.js';
import { PATCH_END, PATCH_START, PROJECT } from '../../src/cli/demo.js';
import { assertBuilt, REPO, runCli } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';
import { gitApply } from '../support/host-files.js';

/** The patch the demo prints between its markers. */
function patchOf(out: string): string {
  const start = out.indexOf(`${PATCH_START}\n`);
  const end = out.indexOf(`${PATCH_END}\n`);
  expect(start).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return out.slice(start + PATCH_START.length + 1, end);
}

/** The demo's starting project under `dir/app`, with `patch` applied by git: the demo's final tree. */
async function applyDemoPatch(dir: string, patch: string): Promise<void> {
  for (const [path, content] of Object.entries(PROJECT)) {
    await mkdir(dirname(join(dir, 'app', path)), { recursive: true });
    await writeFile(join(dir, 'app', path), content);
  }
  await gitApply(dir, patch);
}

describe('command line parsing', () => {
  it('parses mcp flags, repeatable', () => {
    expect(parseCommandLine(['mcp', '--backend', 'host', '--mount', 'a', '--mount', 'b', '--allow', '.'])).toEqual({
      command: 'mcp',
      backend: 'host',
      mounts: [{ hostPath: 'a' }, { hostPath: 'b' }],
      allow: ['.'],
      readOnly: false,
      readBeforeWrite: false,
      quiet: false,
    });
    expect(parseCommandLine(['mcp'])).toMatchObject({ backend: 'memory', mounts: [], allow: [] });
    expect(parseCommandLine(['demo'])).toEqual({ command: 'demo' });
    expect(parseCommandLine(['--help'])).toMatchObject({ command: 'help' });
  });

  it.each([
    [['mcp', '--bogus'], /Unknown option '--bogus'/],
    [['mcp', '--backend', 'cloud'], /--backend must be memory or host/],
    [['mcp', '--backend'], /argument missing/],
    [['mcp', '--mount', 'x'], /--mount needs at least one --allow/],
    [['demo', '--mount', 'x'], /option of the mcp command/],
    [['serve'], /unknown command "serve"/],
    [[], /missing command/],
    [['demo', 'extra'], /unexpected argument "extra"/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

describe('the sessionfs binary', () => {
  const tempDir = tempDirs();
  const sharedDir = tempDirs({ prefix: 'sessionfs-cli-', until: 'file' });
  let hostDir: string;
  beforeAll(() => {
    assertBuilt();
    hostDir = sharedDir();
  });

  it('prints help and the version', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: sessionfs <command>');
    const version = await runCli(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('exits non-zero with a clear message on a bad flag or command', async () => {
    for (const argv of [['mcp', '--bogus'], ['mcp', '--backend', 'cloud'], ['launch'], []]) {
      const result = await runCli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^sessionfs: .+\nRun 'sessionfs --help' for usage\.\n$/);
      expect(result.stdout).toBe('');
    }
  });

  it('refuses a mount outside the allowed roots without printing host paths', async () => {
    const allowed = join(hostDir, 'allowed');
    const secret = join(hostDir, 'secret');
    await mkdir(allowed, { recursive: true });
    await mkdir(secret, { recursive: true });
    await writeFile(join(secret, 'key.txt'), 'hunter2');
    const result = await runCli(['mcp', '--mount', secret, '--allow', allowed]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^sessionfs: could not start the session: /);
    expect(result.stderr).not.toContain(hostDir);
  });

  it('runs the demo: a narrated session with a rollback and a diff, and no host path', async () => {
    const result = await runCli(['demo']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const out = result.stdout;
    expect(out).toContain('1. Mount a host project');
    expect(out).toMatch(/> read_file \{"path":"app\/src\/greet\.ts"\}/);
    expect(out).toContain('rolled back');
    expect(out).toContain('Error [EINVAL]: old_string occurs 3 times in app/src/main.ts (at lines 1, 3)');
    expect(out).toContain('Error [EACCES]');
    expect(out).toMatch(/diff\(hydrated, task-done\): \d+ files changed/);
    expect(out).toMatch(/added\s+app\/test\/unicode\.test\.ts/);
    expect(out).toMatch(/deleted\s+app\/src\/greet\.ts/);
    expect(out).toMatch(/added\s+app\/src\/welcome\.ts/);
    for (const hostPath of [tmpdir(), REPO.replace(/\/$/, ''), homedir()]) expect(out).not.toContain(hostPath);
  });

  it('ends the demo with the session patch: the same every run, and git apply turns the project into the result', async () => {
    const [first, second] = await Promise.all([runCli(['demo']), runCli(['demo'])]);
    const patch = patchOf(first!.stdout);
    expect(patchOf(second!.stdout)).toBe(patch);
    expect(patch.match(/^diff --git /gm)).toHaveLength(7);
    expect(patch).toContain('+export function welcome(name: string): string {\n');

    const dir = tempDir('sessionfs-demo-patch-');
    await applyDemoPatch(dir, patch);
    expect(await readFile(join(dir, 'app/src/welcome.ts'), 'utf8')).toContain('export function welcome(');
    await expect(readFile(join(dir, 'app/src/greet.ts'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(join(dir, 'app/test/welcome.test.ts'), 'utf8')).toContain('welcome("Ada")');
    await expect(readFile(join(dir, 'app/test/greet.test.ts'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('ends the demo with a project that compiles: its final tree type-checks under tsc --strict', async () => {
    const result = await runCli(['demo']);
    const dir = tempDir('sessionfs-demo-tsc-');
    await applyDemoPatch(dir, patchOf(result.stdout));
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom'];
    const files = ['src/main.ts', 'test/welcome.test.ts', 'test/unicode.test.ts'];
    const run = spawnSync(process.execPath, [tsc, ...args, ...files], { cwd: join(dir, 'app'), encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
