import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceNamespace, type DirectoryNamespace, type ManagedWorkspace } from '../../src/index.js';
import { createSession } from '../../src/session/index.js';
import { type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { expectError } from '../../src/testing/harness.js';
import { scratch } from '../host/support.js';

const run = promisify(execFile);
const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
const tool = (name: WorkspaceToolName) => tools.get(name)!;

/** Ids that must each get a workspace of their own, and never a path of the caller's choosing. */
const HOSTILE_IDS = ['', '../x', '..', '.', 'a/b', '/etc', 'nul\0byte', 'x'.repeat(10_240), 'ünïcødé 🙂', '\ud800', 'users', 'A', 'a'];

describe('WorkspaceNamespace', () => {
  const { dir } = scratch();
  const opened: ManagedWorkspace[] = [];
  afterEach(async () => {
    for (const ws of opened.splice(0)) await ws.dispose();
  });
  const open = (namespace: DirectoryNamespace, user: string): ManagedWorkspace => {
    const ws = namespace.open(user);
    opened.push(ws);
    return ws;
  };

  beforeAll(() => {
    if (!fs.existsSync(fileURLToPath(new URL('../../dist/src/index.js', import.meta.url))))
      throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test');
  });

  it('keeps files, snapshots and history across a process restart', async () => {
    const base = dir();
    const child = fileURLToPath(new URL('./fixtures/namespace-child.mjs', import.meta.url));
    const user = 'alice/../bob\0';
    await run(process.execPath, [child, base, 'write', JSON.stringify(user)]);
    const { stdout } = await run(process.execPath, [child, base, 'read', JSON.stringify(user)]);
    expect(JSON.parse(stdout)).toEqual({
      users: [user],
      tags: ['first', 'second'],
      now: 'second version',
      restored: 'first version',
      hasB: false,
    });
  });

  it('gives every id string its own workspace, lists the ids as given, and creates nothing outside dir', async () => {
    const base = dir();
    const parent = join(base, 'parent');
    const namespace = new WorkspaceNamespace({ dir: join(parent, 'ns') });
    for (const [index, id] of HOSTILE_IDS.entries()) await open(namespace, id).write('whoami.txt', `user ${index}`);
    expect(fs.readdirSync(parent)).toEqual(['ns']);
    expect(fs.readdirSync(base)).toEqual(['parent']);
    expect(namespace.list()).toEqual([...HOSTILE_IDS].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const [index, id] of HOSTILE_IDS.entries()) expect((await open(namespace, id).read('whoami.txt')).content).toBe(`user ${index}`);
    expect(() => namespace.open(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });

  it('deletes one user entirely and leaves the others', async () => {
    const namespace = new WorkspaceNamespace({ dir: dir() });
    await open(namespace, 'a').write('f.txt', 'a');
    await open(namespace, 'b').write('f.txt', 'b');
    expect(namespace.delete('a')).toBe(true);
    expect(namespace.delete('a')).toBe(false);
    expect(namespace.list()).toEqual(['b']);
    expect(namespace.has('a')).toBe(false);
    expect(await open(namespace, 'a').exists('f.txt')).toBe(false);
    expect((await open(namespace, 'b').read('f.txt')).content).toBe('b');
  });

  it("no path, link or tool lets one user read or list another user's files", async () => {
    const base = dir();
    const namespace = new WorkspaceNamespace({ dir: base });
    const alice = open(namespace, 'alice');
    const bob = open(namespace, 'bob');
    await bob.write('secret.txt', 'bob secret');
    const hostPaths = [base, alice.root, bob.root];
    const bobHome = join(bob.root, '..');
    for (const path of ['../secret.txt', '../../bob/root/secret.txt', `${bob.root}/secret.txt`, '/../../secret.txt'])
      await expect(alice.read(path)).rejects.toMatchObject({ code: expect.stringMatching(/EACCES|ENOENT|EINVAL/) });
    // A link planted in alice's root (say, by a host shell) towards bob's files is a wall.
    fs.symlinkSync(join(bob.root, 'secret.txt'), join(alice.root, 'to-bob'));
    fs.symlinkSync(bobHome, join(alice.root, 'bob-home'));
    await expectError(alice.read('to-bob'), 'PathEscapeError', 'EACCES', { hostPaths });
    await expectError(alice.list('bob-home'), 'PathEscapeError', 'EACCES', { hostPaths });
    expect(await alice.grep('bob secret')).toEqual([]);
    await using session = await createSession({ namespace, user: 'alice' });
    for (const [name, args] of [
      ['read_file', { path: 'to-bob' }],
      ['read_file', { path: '../bob/root/secret.txt' }],
      ['list_directory', { path: 'bob-home' }],
    ] as const) {
      const result = await session.runTool(tool(name), args);
      expect(result.success).toBe(false);
      expect(JSON.stringify(result)).not.toContain('bob secret');
      for (const host of hostPaths) expect(JSON.stringify(result)).not.toContain(host);
    }
    const grep = await session.runTool(tool('grep'), { pattern: 'bob secret' });
    expect(JSON.stringify(grep)).not.toContain('secret.txt');
  });

  it('createSession({ namespace, user }) works on the user workspace; reset goes back to how the session found it', async () => {
    const namespace = new WorkspaceNamespace({ dir: dir() });
    await open(namespace, 'carol').write('kept.txt', 'from before');
    {
      await using session = await createSession({ namespace, user: 'carol' });
      expect(session.filesystem.backend).toBe('host');
      await session.runTool(tool('write_file'), { path: 'new.txt', content: 'session work' });
      expect((await session.filesystem.read('kept.txt')).content).toBe('from before');
      await session.reset();
      expect(await session.filesystem.exists('new.txt')).toBe(false);
      await session.runTool(tool('write_file'), { path: 'after-reset.txt', content: 'stays' });
    }
    expect((await open(namespace, 'carol').read('after-reset.txt')).content).toBe('stays');
    await expect(createSession({ namespace, user: 'carol', backend: 'memory' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(createSession({ user: 'carol' })).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
