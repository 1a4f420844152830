import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/index.js';
import { kindsOf } from '../../src/testing/file-kinds.js';
import { createSession } from '../../src/session/index.js';
import { shellTool, type ShellResult } from '../../src/shell/index.js';
import { kvDriver } from '../../examples/kv-backend.js';
import { SESSION_KINDS } from '../support/backends.js';

async function shellOn(session: Awaited<ReturnType<typeof createSession>>) {
  const bash = shellTool();
  return async (command: string): Promise<ShellResult> => {
    const result = await session.runTool(bash, { command });
    expect(result.success, result.message).toBe(true);
    return result.value as ShellResult;
  };
}

describe('bash tool: file kinds (executable bits and symlinks)', () => {
  for (const backend of SESSION_KINDS) {
    it(`chmod +x keeps the bit: test -x, ls -l, find -perm and the workspace see it (${backend})`, async () => {
      await using session = await createSession({ backend });
      const run = await shellOn(session);
      const made = await run('printf "#!/bin/sh\\necho hi\\n" > run.sh; chmod +x run.sh; test -x run.sh && echo executable');
      expect(made).toMatchObject({ exitCode: 0, stdout: 'executable\n' });
      expect((await session.filesystem.stat('run.sh')).executable).toBe(true);
      expect((await run('stat -c "%a %A" run.sh')).stdout).toBe('755 -rwxr-xr-x\n');
      await run('echo plain > plain.txt');
      // just-bash's find takes octal modes only (and its ls -l prints fixed modes): see docs/shell.md.
      expect((await run('find . -type f -perm -100')).stdout).toBe('./run.sh\n');
      expect((await run('chmod -x run.sh; test -x run.sh || echo not-executable')).stdout).toBe('not-executable\n');
      expect((await session.filesystem.stat('run.sh')).executable).toBe(false);
      expect((await run('chmod 755 run.sh; stat -c %a run.sh plain.txt')).stdout).toBe('755\n644\n');
    });

    it(`ln -s makes links that readlink, find -type l, ls -l and cat see; an absolute target is stored relative (${backend})`, async () => {
      await using session = await createSession({ backend });
      const run = await shellOn(session);
      await session.filesystem.write('src/lib/a.txt', 'a\n');
      const result = await run('ln -s lib/a.txt src/a-link; ln -s /src/lib lib-dir; ln -s nowhere dangling; cat src/a-link lib-dir/a.txt');
      expect(result).toMatchObject({ exitCode: 0, stdout: 'a\na\n' });
      expect((await run('readlink src/a-link lib-dir dangling')).stdout).toBe('lib/a.txt\nsrc/lib\nnowhere\n');
      expect((await run('for f in dangling lib-dir src/a-link src/lib; do test -L $f && echo $f; done')).stdout).toBe(
        'dangling\nlib-dir\nsrc/a-link\n',
      );
      expect(await kindsOf(session.filesystem)).toEqual({
        dangling: '120000 nowhere',
        'lib-dir': '120000 src/lib',
        'src/': 'dir',
        'src/a-link': '120000 lib/a.txt',
        'src/lib/': 'dir',
        'src/lib/a.txt': '100644 a\n',
      });
    });

    it(`cp dereferences a link without -r and keeps links with -r (${backend})`, async () => {
      await using session = await createSession({ backend });
      const run = await shellOn(session);
      await session.filesystem.write('tool.sh', 'echo t\n', { executable: true });
      await run('mkdir d; ln -s ../tool.sh d/link; cp d/link copied.sh; cp -r d d2');
      expect(await session.filesystem.stat('copied.sh')).toMatchObject({ isSymlink: false, executable: true });
      expect(await session.filesystem.readlink('d2/link')).toBe('../tool.sh');
    });

    it(`a link leading out is stored but never followed (${backend})`, async () => {
      await using session = await createSession({ backend });
      const run = await shellOn(session);
      expect((await run('ln -s ../../../../etc/passwd out; readlink out')).stdout).toBe('../../../../etc/passwd\n');
      expect(await run('cat out')).toMatchObject({ exitCode: 1, stdout: '' });
      const write = await run('echo x > out');
      expect(write.exitCode).not.toBe(0);
      expect(write.stderr).toContain('Permission denied (a symlink leaves the workspace: out)');
      expect(await session.filesystem.stat('out').catch((error: { code: string }) => error.code)).toBe('EACCES');
    });
  }

  it('on a backend without file kinds, chmod +x and ln -s fail with "Operation not supported"', async () => {
    await using session = await createSession({ workspace: createWorkspace(kvDriver()) });
    const run = await shellOn(session);
    await session.filesystem.write('f', 'x');
    const chmod = await run('chmod +x f');
    expect(chmod.exitCode).not.toBe(0);
    expect(chmod.stderr).toContain('Operation not supported');
    const ln = await run('ln -s f l');
    expect(ln.exitCode).not.toBe(0);
    expect(ln.stderr).toContain('Operation not supported');
    expect((await run('chmod -x f; chmod 644 f; echo ok')).stdout).toBe('ok\n');
  });
});
