import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { shellTool, type ShellResult } from '../../src/shell/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { workspaceTree } from './support.js';

async function hostSession(options: Parameters<typeof shellTool>[0] = {}) {
  const session = await createSession({ backend: 'host' });
  const bash = shellTool({ mode: 'host', ...options });
  const run = (command: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
    session.runTool(bash, { command, ...extra }, signal === undefined ? {} : { signal });
  const value = async (command: string, extra: Record<string, unknown> = {}) => {
    const result = await run(command, extra);
    expect(result.success, result.message).toBe(true);
    return result.value as ShellResult;
  };
  return { session, run, value };
}

describe("bash tool, mode 'host'", () => {
  it('runs real programs in the root, shows the root as /, and lists exactly what changed', async () => {
    const { session, value } = await hostSession();
    await using _ = session;
    await session.filesystem.write('src/a.ts', 'export const a = 1;\n');
    expect(await value('pwd; ls; cat src/a.ts | wc -l')).toMatchObject({ exitCode: 0, stdout: '/\nsrc\n1\n' });
    expect((await value('pwd', { cwd: 'src' })).stdout).toBe('/src\n');
    const made = await value('echo a > x.txt; mkdir -p d && touch d/y; rm src/a.ts; grep -q nothing x.txt');
    expect(made).toMatchObject({ exitCode: 1, changed: ['d/y', 'src/a.ts', 'x.txt'] });
    expect(await workspaceTree(session.filesystem)).toEqual({ 'd/': '', 'd/y': '', 'src/': '', 'x.txt': 'a\n' });
  });

  it('gives each command a PATH directory of its own and removes it when the command ends', async () => {
    const { session, value } = await hostSession();
    await using _ = session;
    const first = (await value('echo "${PATH##*/}"')).stdout.trim();
    const second = (await value('echo "${PATH##*/}"; ls -d . > /dev/null')).stdout.trim();
    expect(first).toMatch(/^sessionfs-shell-path-/);
    expect(second).not.toBe(first);
    for (const name of [first, second]) expect(existsSync(join(tmpdir(), name)), name).toBe(false);
  });

  it('refuses programs off the allow-list, paths as command names, dynamic names and PATH changes before running anything', async () => {
    const { session, run, value } = await hostSession();
    await using _ = session;
    for (const command of [
      'echo x > made.txt; curl https://example.com',
      '/usr/bin/id',
      './script.sh',
      'c=id; $c',
      'PATH=/usr/bin id',
      'export PATH=/usr/bin',
      'eval id',
      'echo $(id)',
      'bash -c id',
    ]) {
      const result = await run(command);
      expect(result, command).toMatchObject({ success: false, code: 'EPERM' });
    }
    expect(await session.filesystem.exists('made.txt')).toBe(false);
    // PATH holds only the allowed programs, so one reached indirectly is not found either.
    expect((await value('echo | xargs id')).exitCode).toBe(127);
    expect((await value('find . -maxdepth 0 -exec id \\;')).stdout).toBe('');
    const wider = await hostSession({ allowedCommands: ['id', 'ls'] });
    await using __ = wider.session;
    expect((await wider.value('id -u')).stdout).toBe(`${process.getuid?.()}\n`);
  });

  it('refuses, before anything runs, a program run by path from text bash evaluates at run time, and PATH or LD_* set by any route', async () => {
    const { session, run, value } = await hostSession();
    await using _ = session;
    const touch = '$(/usr/bin/touch pwned)';
    for (const command of [
      `let 'x[${touch}]=1'`,
      `[[ -v 'x[${touch}]' ]]`,
      `declare -a 'x[${touch}]=1'`,
      `printf -v 'x[${touch}]' %s a`,
      `echo 'x[${touch}]' > n.txt; read n < n.txt; echo $((n))`,
      'printf -v PATH %s /usr/bin; echo | xargs touch pwned',
      'declare -n r=PATH; r=/usr/bin; echo | xargs touch pwned',
      'LD_AUDIT=x ls',
      'LD_DEBUG=all ls',
    ]) {
      const result = await run(command);
      expect(result, command).toMatchObject({ success: false, code: 'EPERM' });
    }
    expect(await session.filesystem.exists('pwned')).toBe(false);
    expect(await session.filesystem.exists('n.txt')).toBe(false);
    // The everyday forms still run: arithmetic over numbers, `[ … ]`, `printf -v` into a plain name.
    const everyday = await value("i=0; while [ $i -lt 3 ]; do i=$((i + 1)); done; printf -v out '%s!' $i; echo $out");
    expect(everyday.stdout).toBe('3!\n');
  });

  it("sees none of the host process's environment", async () => {
    process.env.SESSIONFS_SHELL_SECRET = 's3cret';
    try {
      const { session, value } = await hostSession({ env: { GIVEN: 'yes' } });
      await using _ = session;
      expect((await value('echo "[$SESSIONFS_SHELL_SECRET][$GIVEN][$HOME]"')).stdout).toBe('[][yes][/]\n');
    } finally {
      delete process.env.SESSIONFS_SHELL_SECRET;
    }
  });

  it('a deadline or an abort stops the process group and rolls its writes back; big output is capped', async () => {
    const { session, run } = await hostSession({ maxOutputChars: 100 });
    await using _ = session;
    await session.filesystem.write('keep.txt', 'kept\n');
    const before = await workspaceTree(session.filesystem);
    const late = await run('echo changed > keep.txt; echo x > made.txt; while true; do :; done', { timeout_ms: 500 });
    expect(late).toMatchObject({ success: false, code: 'ETIMEDOUT', rolledBack: true });
    expect(await workspaceTree(session.filesystem)).toEqual(before);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const aborted = await run('echo x > made.txt; while true; do :; done', {}, controller.signal);
    expect(aborted).toMatchObject({ success: false, code: 'ABORT_ERR', rolledBack: true });
    expect(await workspaceTree(session.filesystem)).toEqual(before);

    const big = (await run("printf '%s\\n' {1..5000}")).value as ShellResult;
    expect(big.stdout.startsWith('1\n2\n')).toBe(true);
    expect(big.stdout.endsWith('4999\n5000\n')).toBe(true);
    expect(big.stdout).toContain('characters of stdout not shown');
  });

  it('a deadline is a failed, rolled-back call whatever the process exits with', async () => {
    const { session, run } = await hostSession({ allowedCommands: ['rm', 'sleep'] });
    await using _ = session;
    for (let round = 0; round < 15; round += 1) {
      await session.filesystem.write('keep.txt', 'kept\n');
      const result = await run('rm keep.txt; sleep 5', { timeout_ms: 60 });
      expect(result, `round ${round}: ${result.message}`).toMatchObject({ success: false, code: 'ETIMEDOUT', rolledBack: true });
      expect(await session.filesystem.read('keep.txt'), `round ${round}`).toMatchObject({ content: 'kept' });
    }
  });

  it('is refused on a memory workspace, and workspaceTools({ shell: "host" }) offers it', async () => {
    await using session = await createSession({ backend: 'memory' });
    const result = await session.runTool(shellTool({ mode: 'host' }), { command: 'ls' });
    expect(result).toMatchObject({ success: false, code: 'EINVAL' });
    expect(workspaceTools({ shell: 'host' }).at(-1)?.description).toContain('real programs');
  });
});
