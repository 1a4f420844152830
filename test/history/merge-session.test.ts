import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { mergeTool } from '../../src/session/merge.js';
import { createSession, defineTool } from '../../src/session/index.js';
import type { HydratedSession } from '../../src/session/types.js';
import { contentsOf, expectError } from '../../src/testing/harness.js';
import { kindsOf } from '../../src/testing/file-kinds.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { z } from 'zod';
const SESSION_KINDS = ['memory', 'host'] as const;

/** An agent's edit: one tool call writing files, as a model's `write_file` would. */
const writeTool = defineTool({
  name: 'write',
  description: 'writes files',
  parameters: z.object({ files: z.record(z.string(), z.string()) }),
  handler: async ({ files }, { filesystem }) => {
    for (const [path, content] of Object.entries(files)) await filesystem.write(path, content);
    return { success: true, message: 'written' };
  },
});
const edit = (session: HydratedSession, files: Record<string, string>) =>
  session.runTool(writeTool, { files }).then((result) => expect(result.success, result.message).toBe(true));

const ten = Array.from({ length: 10 }, (_, index) => `line ${index + 1}\n`).join('');

describe('session.merge', () => {
  for (const backend of SESSION_KINDS) {
    it(`merges executable bits and links as git would: each side's change of kind is taken (${backend})`, async () => {
      await using parent = await createSession({ backend });
      await edit(parent, { 'bin/run.sh': 'echo run\n', 'lib/a.txt': 'a\n', 'lib/b.txt': 'b\n' });
      await parent.filesystem.symlink('lib/a.txt', 'current');
      await using a = await parent.fork();
      await using b = await parent.fork();
      await a.filesystem.setExecutable('bin/run.sh', true);
      await a.filesystem.symlink('lib', 'lib-link');
      await b.filesystem.delete('current');
      await b.filesystem.symlink('lib/b.txt', 'current');
      expect((await parent.merge(a)).applied).toBe(true);
      expect((await parent.merge(b)).applied).toBe(true);
      expect(await kindsOf(parent.filesystem)).toEqual({
        'bin/': 'dir',
        'bin/run.sh': '100755 echo run\n',
        current: '120000 lib/b.txt',
        'lib/': 'dir',
        'lib-link': '120000 lib',
        'lib/a.txt': '100644 a\n',
        'lib/b.txt': '100644 b\n',
      });
    });

    it(`merges two forks edited in parallel back into their parent, line-wise (${backend})`, async () => {
      await using parent = await createSession({ backend });
      await edit(parent, { 'src/app.ts': ten, 'README.md': 'readme\n' });
      await using a = await parent.fork();
      await using b = await parent.fork();
      await Promise.all([
        edit(a, { 'src/app.ts': ten.replace('line 2\n', 'a 2\n'), 'a.txt': 'from a\n' }),
        edit(b, { 'src/app.ts': ten.replace('line 9\n', 'b 9\n'), 'README.md': 'readme, by b\n' }),
      ]);
      expect(await parent.merge(a)).toEqual({ applied: true, merged: ['a.txt', 'src/app.ts'], conflicts: [] });
      expect(await parent.merge(b)).toEqual({ applied: true, merged: ['README.md', 'src/app.ts'], conflicts: [] });
      expect(await contentsOf(parent.filesystem)).toEqual({
        'README.md': 'readme, by b\n',
        'a.txt': 'from a\n',
        'src/': '',
        'src/app.ts': ten.replace('line 2\n', 'a 2\n').replace('line 9\n', 'b 9\n'),
      });
      // Each merge is one call in the parent's history, with the snapshot before it.
      expect(parent.calls.map((call) => [call.tool, call.params])).toEqual([
        ['write', expect.anything()],
        ['merge', { from: a.id }],
        ['merge', { from: b.id }],
      ]);
      // Two siblings merge against the earlier fork point; a fork merges its parent's later work the same way.
      expect(await b.merge(a)).toMatchObject({ applied: true, conflicts: [] });
      expect((await b.filesystem.read('src/app.ts')).content).toBe(ten.replace('line 2\n', 'a 2\n').replace('line 9\n', 'b 9\n').trimEnd());
    });
  }

  it('returns conflicts as data and changes nothing; markers on request', async () => {
    await using parent = await createSession({ backend: 'memory' });
    await edit(parent, { 'f.txt': ten, 'clean.txt': 'x\n' });
    await using child = await parent.fork();
    await edit(child, { 'f.txt': ten.replace('line 5\n', 'child 5\n'), 'clean.txt': 'from child\n' });
    await edit(parent, { 'f.txt': ten.replace('line 5\n', 'parent 5\n') });
    const before = await contentsOf(parent.filesystem);
    const reported = await parent.merge(child);
    expect(reported).toMatchObject({
      applied: false,
      merged: [],
      conflicts: [
        { path: 'f.txt', kind: 'content', regions: [{ base: 'line 5\n', ours: 'parent 5\n', theirs: 'child 5\n', startLine: 5 }] },
      ],
    });
    expect(await contentsOf(parent.filesystem)).toEqual(before);
    expect(parent.calls.at(-1)?.result).toMatchObject({ success: false, message: expect.stringContaining('f.txt (content)') });

    const marked = await parent.merge(child, { conflicts: 'markers' });
    expect(marked).toMatchObject({ applied: true, merged: ['clean.txt', 'f.txt'], conflicts: [{ path: 'f.txt' }] });
    expect((await parent.filesystem.read('f.txt', { limit: -1 })).content).toContain(
      '<<<<<<< ours\nparent 5\n||||||| base\nline 5\n=======\nchild 5\n>>>>>>> theirs\n',
    );
    expect((await parent.filesystem.read('clean.txt')).content).toBe('from child');
  });

  it('is never half-applied: a write the policy refuses fails the merge with its error, nothing changed', async () => {
    const workspace = createWorkspace(memoryDriver(), { policy: { deny: ['locked/**'] } });
    await using parent = await createSession({ workspace });
    await edit(parent, { 'a.txt': 'a\n', 'gone.txt': 'g\n' });
    await using child = await createSession({ backend: 'memory' });
    await edit(child, { 'a.txt': 'a\n', 'gone.txt': 'g\n' });
    const base = await child.filesystem.snapshot();
    // Removals run first: the refused write comes after the merge deleted gone.txt, which comes back.
    await child.filesystem.delete('gone.txt');
    await child.filesystem.write('a.txt', 'changed\n');
    await child.filesystem.write('b.txt', 'new\n');
    await child.filesystem.write('locked/x.txt', 'refused\n');
    const before = await contentsOf(parent.filesystem);
    await expectError(parent.merge(child, { base }), 'PolicyError', 'EPERM');
    expect(await contentsOf(parent.filesystem)).toEqual(before);
    expect(parent.calls.at(-1)?.result).toMatchObject({ success: false, rolledBack: true, code: 'EPERM' });
    await workspace.dispose();
  });

  it('merges from a workspace against a base given as either side’s snapshot', async () => {
    await using session = await createSession({ backend: 'memory' });
    await edit(session, { 'a.txt': 'one\ntwo\n' });
    const base = await session.filesystem.snapshot();
    await using other = await createSession({ backend: 'memory' });
    await other.filesystem.write('a.txt', 'one\ntwo\nthree\n');
    await edit(session, { 'a.txt': 'ONE\ntwo\n' });
    expect(await session.merge(other.filesystem, { base })).toEqual({ applied: true, merged: ['a.txt'], conflicts: [] });
    expect((await session.filesystem.read('a.txt')).content).toBe('ONE\ntwo\nthree');
  });

  it('refuses, changing nothing: unrelated sessions without a base, itself, bad options', async () => {
    await using a = await createSession({ backend: 'memory' });
    await using b = await createSession({ backend: 'memory' });
    await b.filesystem.write('x.txt', 'x\n');
    await expectError(a.merge(b), 'InvalidArgumentError', 'EINVAL');
    await expectError(a.merge(a.filesystem), 'InvalidArgumentError', 'EINVAL');
    await expectError(a.merge(a), 'InvalidArgumentError', 'EINVAL');
    await expectError(a.merge(b, { theirs: true } as never), 'InvalidArgumentError', 'EINVAL');
    await expectError(a.merge(b, { conflicts: 'ours' } as never), 'InvalidArgumentError', 'EINVAL');
    const foreign = await createSession({ backend: 'memory' });
    const elsewhere = await foreign.filesystem.snapshot();
    await expectError(a.merge(b, { base: elsewhere }), 'InvalidArgumentError', 'EINVAL');
    await foreign.dispose();
    expect(await contentsOf(a.filesystem)).toEqual({});
  });
});

describe('the merge tool', () => {
  it('merges the agents an orchestrator names, and returns conflicts as its result', async () => {
    await using main = await createSession({ backend: 'memory' });
    await edit(main, { 'f.txt': ten });
    const agents = new Map([
      ['tests', await main.fork()],
      ['docs', await main.fork()],
      ['rival', await main.fork()],
    ]);
    await edit(agents.get('tests')!, { 'f.txt': ten.replace('line 1\n', 'tests 1\n'), 'test.ts': 'test\n' });
    await edit(agents.get('docs')!, { 'f.txt': ten.replace('line 10\n', 'docs 10\n') });
    await edit(agents.get('rival')!, { 'f.txt': ten.replace('line 1\n', 'rival 1\n') });
    const merge = mergeTool({ sessions: agents });
    expect(await main.runTool(merge, { from: 'tests' })).toMatchObject({
      success: true,
      message: 'merging tests: merged 2 paths: f.txt, test.ts',
      value: { applied: true, merged: ['f.txt', 'test.ts'], conflicts: [] },
    });
    expect(await main.runTool(merge, { from: 'docs' })).toMatchObject({ success: true });
    const rival = await main.runTool(merge, { from: 'rival' });
    expect(rival).toMatchObject({
      success: false,
      message: 'merging rival: 1 conflicts, nothing changed: f.txt (content)',
      value: { applied: false, conflicts: [{ path: 'f.txt', regions: [{ ours: 'tests 1\n', theirs: 'rival 1\n' }] }] },
    });
    expect(await main.runTool(merge, { from: 'nobody' })).toMatchObject({
      success: false,
      code: 'EINVAL',
      message: expect.stringContaining('known: tests, docs, rival'),
    });
    expect((await main.filesystem.read('f.txt', { limit: -1 })).content).toBe(
      ten.replace('line 1\n', 'tests 1\n').replace('line 10\n', 'docs 10\n').trimEnd(),
    );
    for (const agent of agents.values()) await agent.dispose();
  });

  it('takes a Map or a lookup function, nothing else', () => {
    expect(() => mergeTool({ sessions: {} as never })).toThrow(/Map from names to sessions/);
    expect(mergeTool({ sessions: () => undefined }).name).toBe('merge');
  });
});
