import { describe, expect, it } from 'vitest';
import { composeDriver, createWorkspace, memoryDriver } from '../../src/index.js';
import { createSession } from '../../src/session/index.js';
import { shellTool, type ShellResult } from '../../src/shell/index.js';

/** A root with a policy and small path limits, a read-only mount and an append-only one. */
async function mountedSession() {
  const readOnly = createWorkspace(memoryDriver());
  await readOnly.write('r.txt', 'r\n');
  const workspace = createWorkspace(
    composeDriver({
      mounts: [
        {
          path: '/',
          workspace: createWorkspace(memoryDriver(), {
            policy: { blockedExtensions: ['.pem'] },
            limits: { maxPathDepth: 4, maxSegmentLength: 20 },
          }),
          access: 'read-write',
        },
        { path: '/ro', workspace: readOnly, access: 'read-only' },
        { path: '/logs', access: 'append-only' },
      ],
    }),
  );
  await workspace.write('k.txt', 'k\n');
  await workspace.write('logs/l.txt', 'l\n');
  const session = await createSession({ workspace });
  const bash = shellTool();
  const stderr = async (command: string) => {
    const result = await session.runTool(bash, { command });
    expect(result.success, result.message).toBe(true);
    const value = result.value as ShellResult;
    expect(value.exitCode, command).not.toBe(0);
    return value.stderr;
  };
  return { session, stderr };
}

describe('bash tool: a refusal names its cause, as a real system would', () => {
  it('a read-only or append-only mount and a blocked extension read as such, with the reason (sed -i, tee, mv, cp, rm)', async () => {
    const { session, stderr } = await mountedSession();
    await using _ = session;
    expect(await stderr('sed -i s/r/x/ ro/r.txt')).toBe('sed: ro/r.txt: Read-only file system (the mount at ro is read-only: ro/r.txt)\n');
    expect(await stderr('sed -i s/l/x/ logs/l.txt')).toBe(
      'sed: logs/l.txt: Operation not permitted (the mount at logs is append-only: cannot overwrite logs/l.txt)\n',
    );
    expect(await stderr('mv k.txt k.PEM')).toBe(
      "mv: cannot move 'k.txt': Operation not permitted (denied by the workspace policy: k.PEM)\n",
    );
    expect(await stderr('cp k.txt k.pem')).toBe(
      "cp: cannot copy 'k.txt': Operation not permitted (denied by the workspace policy: k.pem)\n",
    );
    expect(await stderr('echo a | tee t.pem')).toBe('tee: t.pem: Operation not permitted (denied by the workspace policy: t.pem)\n');
    expect(await stderr('echo a > t.pem')).toBe('bash: /t.pem: Operation not permitted (denied by the workspace policy: t.pem)\n');
    expect(await stderr('rm logs/l.txt')).toBe(
      "rm: cannot remove 'logs/l.txt': Operation not permitted (the mount at logs is append-only: cannot delete logs/l.txt)\n",
    );
    expect(await stderr('mv k.txt ro/')).toBe("mv: cannot move 'k.txt': Read-only file system (the mount at ro is read-only: ro/k.txt)\n");
    expect(await session.filesystem.read('k.txt')).toMatchObject({ content: 'k' });
    expect(await session.filesystem.list('/')).not.toContainEqual(expect.objectContaining({ name: 'k.PEM' }));
  });

  it('a path over the length limits is ENAMETOOLONG ("File name too long"), not "file too large"', async () => {
    const { session, stderr } = await mountedSession();
    await using _ = session;
    expect(await stderr('mkdir -p a/b/c/d/e')).toBe(
      "mkdir: cannot create directory 'a/b/c/d/e': File name too long (path is too deep: 5 segments, the limit is 4: a/b/c/d/e)\n",
    );
    expect(await stderr(`echo > ${'a'.repeat(30)}`)).toMatch(/^bash: \/a{30}: File name too long \(path segment is too long/);
  });

  it('a hard link is not supported (ENOTSUP), not "hard link not allowed for directory"; ln -s works', async () => {
    const { session, stderr } = await mountedSession();
    await using _ = session;
    expect(await stderr('ln k.txt l2')).toBe('ln: Operation not supported (hard links are not supported on a workspace; use ln -s)\n');
    expect(await stderr('ln -s k.txt l; cat l; false')).toBe('');
    expect(await session.filesystem.readlink('l')).toBe('k.txt');
  });

  it('chmod and touch on a read-only workspace fail with "Read-only file system"', async () => {
    await using session = await createSession({ workspace: createWorkspace(memoryDriver(), { readOnly: true }) });
    const bash = shellTool();
    for (const [command, expected] of [
      ['chmod +x /', "chmod: cannot access '/': Read-only file system (the workspace is read-only: /)\n"],
      ['touch /', "touch: cannot touch '/': Read-only file system (the workspace is read-only: /)\n"],
    ] as const) {
      const result = await session.runTool(bash, { command });
      expect(result.value as ShellResult, command).toMatchObject({ exitCode: 1, stderr: expected });
    }
  });
});
