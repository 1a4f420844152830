import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { shellTool, type ShellResult } from '../../src/shell/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { workspaceTree } from './support.js';
import { SESSION_KINDS } from '../support/backends.js';

const BACKENDS = SESSION_KINDS;

async function sessionWithShell(backend: (typeof BACKENDS)[number], options: Parameters<typeof shellTool>[0] = {}) {
  const session = await createSession({ backend });
  const bash = shellTool(options);
  const run = async (command: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
    session.runTool(bash, { command, ...extra }, signal === undefined ? {} : { signal });
  const value = async (command: string, extra: Record<string, unknown> = {}) => {
    const result = await run(command, extra);
    expect(result.success, result.message).toBe(true);
    return result.value as ShellResult;
  };
  return { session, run, value };
}

describe('bash tool: results', () => {
  for (const backend of BACKENDS) {
    it(`a non-zero exit is a successful call; the result says the code, the output and what changed (${backend})`, async () => {
      const { session, run, value } = await sessionWithShell(backend);
      await using _ = session;
      await session.filesystem.write('old.txt', 'old\n');
      const failed = await run('grep nothing old.txt');
      expect(failed).toMatchObject({ success: true, rolledBack: false, value: { exitCode: 1, stdout: '', changed: [] } });
      expect(failed.message).toContain('Exit code: 1');

      const changed = await value('echo a > x.txt; mkdir -p d/e; rm old.txt; echo to-stderr >&2');
      expect(changed).toEqual({ exitCode: 0, stdout: '', stderr: 'to-stderr\n', changed: ['d/e', 'old.txt', 'x.txt'] });
      expect(await session.filesystem.exists('old.txt')).toBe(false);
    });

    it(`cwd is relative to the workspace root; a missing one fails the call before anything runs (${backend})`, async () => {
      const { session, run, value } = await sessionWithShell(backend);
      await using _ = session;
      await session.filesystem.write('src/lib/x.ts', 'x');
      expect((await value('pwd; ls', { cwd: 'src' })).stdout).toBe('/src\nlib\n');
      expect((await value('pwd', { cwd: '/src/lib' })).stdout).toBe('/src/lib\n');
      expect(await run('touch y', { cwd: 'nowhere' })).toMatchObject({ success: false, code: 'ENOENT' });
      expect(await run('touch y', { cwd: 'src/lib/x.ts' })).toMatchObject({ success: false, code: 'ENOTDIR' });
      expect(await session.filesystem.exists('y')).toBe(false);
    });

    it(`stdout and stderr past the limit keep their head and tail with a note (${backend})`, async () => {
      const { session, value } = await sessionWithShell(backend, { maxOutputChars: 200 });
      await using _ = session;
      const result = await value('seq 1 1000; seq 1 1000 >&2');
      for (const stream of [result.stdout, result.stderr]) {
        expect(stream.startsWith('1\n2\n3\n')).toBe(true);
        expect(stream.endsWith('999\n1000\n')).toBe(true);
        expect(stream).toMatch(/\[\.\.\. \d+ characters of std(out|err) not shown/);
        expect(stream.length).toBeLessThan(400);
      }
    });
  }

  it('a catastrophic pattern in grep, sed or awk finishes at once (just-bash matches in linear time)', async () => {
    const { session, value } = await sessionWithShell('memory');
    await using _ = session;
    await session.filesystem.write('trap.txt', `${'a'.repeat(48)}!\n`);
    const result = await value("grep -cE '^(a+)+$' trap.txt; sed -E 's/^(a+)+$/x/' trap.txt; awk '/^(a+)+$/' trap.txt", {
      timeout_ms: 5000,
    });
    expect(result.stdout).toBe(`0\n${'a'.repeat(48)}!\n`);
  });

  it('workspaceTools({ shell: true }) adds the bash tool last; without it there is none', () => {
    expect(workspaceTools({ shell: true }).at(-1)?.name).toBe('bash');
    expect(workspaceTools().map((t) => t.name)).not.toContain('bash');
  });
});

describe('bash tool: failures are rolled back', () => {
  for (const backend of BACKENDS) {
    it(`a command past its deadline fails with ETIMEDOUT and its writes are undone (${backend})`, async () => {
      const { session, run } = await sessionWithShell(backend);
      await using _ = session;
      await session.filesystem.write('keep.txt', 'kept\n');
      const before = await workspaceTree(session.filesystem);
      const result = await run('echo changed > keep.txt; while true; do echo x >> grow.txt; done', { timeout_ms: 300 });
      expect(result, result.message).toMatchObject({ success: false, code: 'ETIMEDOUT', rolledBack: true });
      expect(await workspaceTree(session.filesystem)).toEqual(before);
    });

    it(`a deadline is a failed, rolled-back call in every interleaving, never "exit 124, success" (${backend})`, async () => {
      const { session, run } = await sessionWithShell(backend);
      await using _ = session;
      // The interpreter's clock and ours raced: now and then its "sleep exceeded its execution deadline" (exit
      // 124) came first and passed for a command's own status, keep.txt deleted. Many runs, so a race shows.
      for (let round = 0; round < 40; round += 1) {
        await session.filesystem.write('keep.txt', 'kept\n');
        const command = round % 2 === 0 ? 'rm keep.txt; sleep 5' : 'rm keep.txt; sleep 5 & wait';
        const result = await run(command, { timeout_ms: 40 });
        expect(result, `round ${round}: ${result.message}`).toMatchObject({ success: false, code: 'ETIMEDOUT', rolledBack: true });
        expect(await session.filesystem.read('keep.txt'), `round ${round}`).toMatchObject({ content: 'kept' });
      }
      for (let round = 0; round < 10; round += 1) {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 30);
        const result = await run('rm keep.txt; sleep 5', { timeout_ms: 60_000 }, controller.signal);
        expect(result, `abort ${round}: ${result.message}`).toMatchObject({ success: false, code: 'ABORT_ERR', rolledBack: true });
        expect(await session.filesystem.read('keep.txt'), `abort ${round}`).toMatchObject({ content: 'kept' });
      }
    });

    it(`an interpreter limit fails the call and rolls it back (${backend})`, async () => {
      const { session, run } = await sessionWithShell(backend, { executionLimits: { maxCommandCount: 500 } });
      await using _ = session;
      const result = await run('echo a > made.txt; while true; do :; done');
      expect(result).toMatchObject({ success: false, code: 'ETOOL', rolledBack: true });
      expect(result.message).toContain('too many commands');
      expect(await session.filesystem.exists('made.txt')).toBe(false);
    });

    it(`an abort fails the call with ABORT_ERR and rolls it back (${backend})`, async () => {
      const { session, run } = await sessionWithShell(backend);
      await using _ = session;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const result = await run('while true; do echo x >> grow.txt; done', {}, controller.signal);
      expect(result).toMatchObject({ success: false, code: 'ABORT_ERR', rolledBack: true });
      expect(await session.filesystem.exists('grow.txt')).toBe(false);
    });
  }
});

describe('bash tool: nothing leaves the workspace', () => {
  for (const backend of BACKENDS) {
    it(`host paths, .., /proc, /dev, /bin and the network stay out of reach (${backend})`, async () => {
      const { session, value } = await sessionWithShell(backend);
      await using _ = session;
      await session.filesystem.write('a.txt', 'a\n');

      const passwd = await value('cat /etc/passwd');
      expect(passwd.exitCode).not.toBe(0);
      expect(passwd.stdout).toBe('');
      expect((await value('cd ../../..; pwd; ls')).stdout).toBe('/\na.txt\n');
      expect((await value('cat ../../etc/passwd; ls ../..')).stdout).toBe('a.txt\n');
      for (const dir of ['/proc', '/proc/self', '/dev', '/bin', '/usr', '/tmp', '/home']) {
        expect((await value(`ls ${dir}`)).exitCode, dir).not.toBe(0);
      }
      expect((await value('cat /proc/self/environ /proc/version')).stdout).toBe('');
      expect((await value('ls /proc/self/root /proc/self/cwd; cat /proc/self/root/etc/passwd')).stdout).toBe('');
      expect((await value('cat < /etc/passwd; . /etc/profile; source /etc/passwd; grep -rs root /etc')).stdout).toBe('');
      expect((await value('cp /etc/passwd stolen; cat /etc/hostname >> a.txt; find / -name passwd')).stdout).toBe('');
      expect((await value('curl -s https://example.com')).exitCode).toBe(127);
      expect((await value('wget https://example.com')).exitCode).toBe(127);
      expect((await value('echo x > /dev/null; cat /dev/null; echo ok')).stdout).toBe('ok\n');

      // `/etc/passwd` names the workspace's own path here: the link is stored relative, and reads nothing from the host.
      expect((await value('ln -s /etc/passwd p; readlink p; cat p; rm p')).stdout).toBe('etc/passwd\n');
      expect((await value('ln a.txt hard')).exitCode).not.toBe(0);
      expect((await value('echo x > missing/dir/f.txt; echo next')).exitCode).toBe(1);
      // Nothing of the interpreter's own layout was created in the workspace.
      expect(await workspaceTree(session.filesystem)).toEqual({ 'a.txt': 'a\n' });
      const listing = await value('ls -la / ; find / ; env');
      if (backend === 'host') expect(listing.stdout).not.toContain(session.filesystem.root);
    });
  }

  it('a symlink in a host workspace that leads outside it is not followed; one that stays inside is', async () => {
    const { session, value } = await sessionWithShell('host');
    await using _ = session;
    const root = session.filesystem.root;
    await session.filesystem.write('src/a.txt', 'inside\n');
    symlinkSync('/etc', join(root, 'etc-link'));
    symlinkSync('/etc/passwd', join(root, 'passwd-link'));
    symlinkSync('../..', join(root, 'src', 'up'));
    symlinkSync('a.txt', join(root, 'src', 'a-link'));
    symlinkSync('src', join(root, 'src-link'));
    const result = await value(
      'cat passwd-link; cat etc-link/passwd; ls etc-link; echo x > passwd-link; ls src/up; cat src/up/etc/passwd; cd src/up && pwd',
    );
    expect(result.stdout).toBe('');
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).not.toContain(root);
    expect((await value('cat src/a-link src-link/a.txt')).stdout).toBe('inside\ninside\n');
    // A target is data: readlink shows it, whatever it names (the link is still never followed out).
    expect((await value('readlink passwd-link src/a-link')).stdout).toBe('/etc/passwd\na.txt\n');
  });
});
