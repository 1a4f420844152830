import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { NotSupportedError } from '../../src/workspace/errors.js';
import { tempDirs } from '../../src/testing/harness.js';
import { SESSION_KINDS } from '../support/backends.js';

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

describe('session.fork()', () => {
  const tempDir = tempDirs();
  for (const backend of SESSION_KINDS) {
    it(`gives a new session with the same content, snapshots, history and outputs, independent afterwards (${backend})`, async () => {
      await using parent = await createSession({ backend });
      const tools = new Map(workspaceTools().map((t) => [t.name, t]));
      const run = (session: typeof parent, name: WorkspaceToolName, params: unknown) => session.runTool(tools.get(name)!, params);
      await run(parent, 'write_file', { path: 'plan.md', content: 'try A\n' });
      await run(parent, 'send_file', { path: 'plan.md' });
      await run(parent, 'write_file', { path: 'plan.md', content: 'try A, refined\n' });

      await using child = await parent.fork();
      expect(child.id).not.toBe(parent.id);
      expect((await child.filesystem.read('plan.md')).content).toBe('try A, refined');
      expect(child.calls.map((h) => h.tool)).toEqual(['write_file', 'send_file', 'write_file']);
      expect(child.snapshots).toEqual(parent.snapshots);
      expect(child.outputs).toEqual(parent.outputs);
      expect(text(child.readOutput('output-1'))).toBe('try A\n');

      // Independent: each side's calls, outputs and rollbacks stay its own.
      await run(child, 'write_file', { path: 'plan.md', content: 'try B\n' });
      await run(child, 'send_file', { path: 'plan.md' });
      expect((await parent.filesystem.read('plan.md')).content).toBe('try A, refined');
      expect(parent.calls).toHaveLength(3);
      expect(parent.outputs.map((o) => o.id)).toEqual(['output-1']);
      expect(text(child.readOutput('output-2'))).toBe('try B\n');
      expect(() => parent.readOutput('output-2')).toThrow(/known ids: output-1/);
      // And the other way: the parent's later calls and snapshots are not the fork's.
      const childSnapshots = [...child.snapshots];
      await run(parent, 'write_file', { path: 'parent-only.md', content: 'p\n' });
      expect(parent.calls).toHaveLength(4);
      expect(child.calls.map((h) => h.tool)).toEqual(['write_file', 'send_file', 'write_file', 'write_file', 'send_file']);
      expect(child.snapshots).toEqual(childSnapshots);
      expect(await child.filesystem.exists('parent-only.md')).toBe(false);

      // A snapshot the parent took before the fork rolls the fork back.
      await child.rollbackTo(parent.snapshots[2]!);
      expect((await child.filesystem.read('plan.md')).content).toBe('try A');
      expect((await parent.filesystem.read('plan.md')).content).toBe('try A, refined');

      // reset() puts the fork back as it was forked.
      await child.filesystem.write('extra.txt', 'x');
      await child.reset();
      expect((await child.filesystem.read('plan.md')).content).toBe('try A, refined');
      expect(await child.filesystem.exists('extra.txt')).toBe(false);
      expect(child.calls).toEqual([]);
    });
  }

  it('a fork owns its workspace: disposing it removes its host root, the parent keeps working', async () => {
    const parent = await createSession({ backend: 'host' });
    await parent.filesystem.write('a.txt', 'a');
    const child = await parent.fork();
    const root = child.filesystem.root;
    expect(root).not.toBe(parent.filesystem.root);
    expect(existsSync(join(root, 'a.txt'))).toBe(true);
    await child.dispose();
    expect(existsSync(root)).toBe(false);
    expect((await parent.filesystem.read('a.txt')).content).toBe('a');
    await parent.dispose();
  });

  it('a fork of a hydrated session writes back against the same hydration baseline', async () => {
    const project = tempDir('sessionfs-fork-project-');
    await writeFile(join(project, 'notes.md'), 'draft\n');
    await using parent = await createSession({
      backend: 'memory',
      sources: [{ hostPath: project, path: 'p' }],
      allowedHostRoots: [project],
    });
    await parent.filesystem.write('p/notes.md', 'from the parent\n');
    await using child = await parent.fork();
    expect(child.hydration).toEqual(parent.hydration);
    await child.filesystem.write('p/notes.md', 'from the fork\n');
    expect(await child.writeBack()).toMatchObject({ written: ['p/notes.md'], conflicts: [] });
    expect(await readFile(join(project, 'notes.md'), 'utf8')).toBe('from the fork\n');
    // The parent's baseline is still the hydration: the host changed since, so its write-back is a conflict.
    expect((await parent.writeBack({ dryRun: true })).conflicts.map((c) => c.path)).toEqual(['p/notes.md']);
  });

  it('a backend that cannot fork refuses with NotSupportedError and creates nothing', async () => {
    const project = tempDir('sessionfs-fork-overlay-');
    await writeFile(join(project, 'a.txt'), 'a');
    await using session = await createSession({
      backend: 'overlay',
      sources: [{ hostPath: project, path: 'p' }],
      allowedHostRoots: [project],
    });
    await expect(session.fork()).rejects.toBeInstanceOf(NotSupportedError);
    await expect(session.fork()).rejects.toMatchObject({ code: 'ENOTSUP' });
    expect((await session.filesystem.read('p/a.txt')).content).toBe('a');
  });

  it('a fork of a read-only session is read-only', async () => {
    await using parent = await createSession({ backend: 'memory', readOnly: true });
    await using child = await parent.fork();
    expect(child.filesystem.readOnly).toBe(true);
    await expect(child.filesystem.write('a.txt', 'a')).rejects.toMatchObject({ code: 'EROFS' });
  });
});
