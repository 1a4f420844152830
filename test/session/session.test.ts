import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FileNotFoundError } from '../../src/workspace/errors.js';
import { createSession, defineTool, type CreateSessionOptions, type HydratedSession } from '../../src/session/index.js';
import type { ToolContext } from '../../src/session/types.js';
import { contentsOf } from '../../src/testing/harness.js';
import { SESSION_BACKENDS, caught, hostTrees } from '../support/backends.js';

const writeTool = defineTool({
  name: 'write',
  description: 'Writes files',
  parameters: z.object({ files: z.record(z.string(), z.string()) }),
  async handler({ files }, { filesystem }) {
    for (const [path, content] of Object.entries(files)) await filesystem.write(path, content);
    return { success: true, message: `wrote ${Object.keys(files).length} files`, value: Object.keys(files) };
  },
});

/** Writes, then fails in the way `how` says. */
const failingTool = defineTool({
  name: 'fail_after_write',
  description: 'Writes a file, then fails',
  parameters: z.object({ path: z.string(), how: z.enum(['workspace-error', 'host-error', 'result', 'result-with-code', 'string']) }),
  async handler({ path, how }, { filesystem }) {
    await filesystem.write(path, 'half done');
    await filesystem.delete('keep.txt');
    switch (how) {
      case 'workspace-error':
        await filesystem.read('missing.txt');
        break;
      case 'host-error':
        throw new Error(
          `EACCES: permission denied, open '${filesystem.root === '/' ? '/srv/secret/data.txt' : join(filesystem.root, 'x.txt')}' and '/home/someone/.ssh/id_rsa'`,
        );
      case 'result':
        return { success: false, message: 'the tool gave up' };
      case 'result-with-code':
        return { success: false, message: 'not found', value: { code: 'ENOENT' } };
      case 'string':
        throw 'a bare string';
    }
    return { success: true, message: 'unreachable' };
  },
});

describe.each(SESSION_BACKENDS)('sessions on $name', ({ session: backend }) => {
  const host = hostTrees();
  const sessions: HydratedSession[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
  });
  async function open(options: Partial<CreateSessionOptions> = {}): Promise<HydratedSession> {
    const session = await createSession({ backend, ...options });
    sessions.push(session);
    return session;
  }

  it('defineTool adds the JSON Schema of the input side of the parameters', () => {
    const tool = defineTool({
      name: 'demo',
      description: 'demo',
      parameters: z.object({ path: z.string().describe('a path'), limit: z.number().int().default(10) }),
      handler: () => ({ success: true, message: 'ok' }),
    });
    expect(tool.jsonSchema).toMatchObject({
      type: 'object',
      properties: { path: { type: 'string', description: 'a path' }, limit: { type: 'integer', default: 10 } },
      required: ['path'],
    });
    expect(() => defineTool({ ...tool, name: 'has space' })).toThrow(/tool name/);
  });

  it('hydrates the sources at creation, and a successful call keeps its changes and is recorded', async () => {
    const source = host.tree({ 'src/a.ts': 'export const a = 1;\n' });
    const session = await open({ id: 'one', sources: [{ hostPath: source, path: 'project' }], allowedHostRoots: [source] });
    expect(session.id).toBe('one');
    expect(session.hydration).toMatchObject({ files: 1 });
    const result = await session.runTool(writeTool, { files: { 'project/b.ts': 'b' } });
    expect(result).toEqual({ success: true, message: 'wrote 1 files', value: ['project/b.ts'], rolledBack: false });
    expect(await contentsOf(session.filesystem)).toEqual({
      'project/': '',
      'project/b.ts': 'b',
      'project/src/': '',
      'project/src/a.ts': 'export const a = 1;\n',
    });
    expect(session.calls).toHaveLength(1);
    expect(session.calls[0]).toMatchObject({ tool: 'write', params: { files: { 'project/b.ts': 'b' } }, result: { success: true } });
    expect(session.snapshots).toEqual([session.calls[0]?.snapshot]);
  });

  it.each([
    ['workspace-error', 'ENOENT'],
    ['host-error', 'ETOOL'],
    ['result', 'ETOOL'],
    ['result-with-code', 'ENOENT'],
    ['string', 'ETOOL'],
  ] as const)('a call failing with %s is rolled back and reports %s', async (how, code) => {
    const session = await open();
    await session.filesystem.write('keep.txt', 'kept');
    const result = await session.runTool(failingTool, { path: 'new/file.txt', how });
    expect(result).toMatchObject({ success: false, rolledBack: true, code });
    expect(await contentsOf(session.filesystem)).toEqual({ 'keep.txt': 'kept' });
    expect(session.calls[0]).toMatchObject({ tool: 'fail_after_write', result: { rolledBack: true, code } });
    expect(session.calls[0]?.snapshot).toBeDefined();
  });

  it('a thrown host error reaches the result with no host path in it', async () => {
    const session = await open();
    await session.filesystem.write('keep.txt', 'kept');
    const result = await session.runTool(failingTool, { path: 'f.txt', how: 'host-error' });
    expect(result.message).toMatch(/^fail_after_write failed: EACCES: permission denied/);
    expect(result.message).not.toMatch(/\/srv|\/home|\.ssh/);
    if (session.filesystem.root !== '/') expect(result.message).not.toContain(session.filesystem.root);
  });

  it('invalid parameters: a failed result, nothing run, nothing touched, no snapshot', async () => {
    const session = await open();
    let ran = false;
    const tool = defineTool({
      name: 'strict',
      description: 'strict',
      parameters: z.object({ count: z.number().int().positive() }),
      handler: () => {
        ran = true;
        return { success: true, message: 'ran' };
      },
    });
    for (const params of [{ count: -1 }, { count: 'three' }, undefined, null]) {
      const result = await session.runTool(tool, params);
      expect(result).toMatchObject({ success: false, rolledBack: false, code: 'EINVAL' });
      expect(result.message).toContain('invalid parameters for strict');
    }
    const throwing = defineTool({
      name: 'throwing_schema',
      description: 'a refinement that throws',
      parameters: z.object({ x: z.string() }).refine(() => {
        throw new Error('cannot check /srv/private/config');
      }),
      handler: () => {
        ran = true;
        return { success: true, message: 'ran' };
      },
    });
    // An async refinement: checked all the same (the synchronous parse hands over to the asynchronous one).
    const checkedLater = defineTool({
      name: 'async_schema',
      description: 'an async refinement',
      annotations: { readOnlyHint: true },
      parameters: z.object({ name: z.string().refine(async (name) => name !== 'taken', 'that name is taken') }),
      handler: ({ name }) => ({ success: true, message: `hello ${name}` }),
    });
    expect(await session.runTool(checkedLater, { name: 'free' })).toMatchObject({ success: true, message: 'hello free' });
    const taken = await session.runTool(checkedLater, { name: 'taken' });
    expect(taken).toMatchObject({ success: false, code: 'EINVAL' });
    expect(taken.message).toContain('that name is taken');
    // The same from another copy of zod, whose async error is another class: told apart by nothing but the throw.
    const foreign = z.object({ name: z.string().refine(async (name) => name !== 'taken') });
    Object.assign(foreign, {
      safeParse: () => {
        throw new (class $ZodAsyncError extends Error {})('Encountered Promise during synchronous parse');
      },
    });
    const otherCopy = defineTool({ ...checkedLater, name: 'foreign_schema', parameters: foreign });
    expect(await session.runTool(otherCopy, { name: 'free' })).toMatchObject({ success: true, message: 'hello free' });
    const thrown = await session.runTool(throwing, { x: 'y' });
    expect(thrown).toMatchObject({ success: false, rolledBack: false, code: 'EINVAL' });
    expect(thrown.message).not.toContain('/srv');
    expect(ran).toBe(false);
    expect(session.snapshots).toEqual([]);
    expect(session.calls).toHaveLength(8);
    expect(session.calls.every((entry) => entry.snapshot === undefined)).toBe(true);
  });

  it('an abort rolls back, even when the handler ignores the signal, and the handler cannot write afterwards', async () => {
    const session = await open();
    await session.filesystem.write('keep.txt', 'kept');
    let lateWrite: Promise<unknown> | undefined;
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const tool = defineTool({
      name: 'slow',
      description: 'ignores its signal',
      parameters: z.object({}),
      async handler(_params, { filesystem }) {
        await filesystem.write('partial.txt', 'partial');
        started();
        await stuck;
        lateWrite = filesystem.write('late.txt', 'after the abort');
        await lateWrite.catch(() => undefined);
        return { success: true, message: 'finished late' };
      },
    });
    const controller = new AbortController();
    const pending = session.runTool(tool, {}, { signal: controller.signal });
    // Aborted once it runs (the session records the write before it first).
    await running;
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ success: false, rolledBack: true, code: 'ABORT_ERR' });
    expect(await contentsOf(session.filesystem)).toEqual({ 'keep.txt': 'kept' });

    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(lateWrite).rejects.toThrow(/has ended/);
    expect(await contentsOf(session.filesystem)).toEqual({ 'keep.txt': 'kept' });

    // Aborted before it starts: nothing runs and nothing is snapshotted.
    const before = session.snapshots.length;
    const early = await session.runTool(writeTool, { files: { 'x.txt': 'x' } }, { signal: AbortSignal.abort() });
    expect(early).toMatchObject({ success: false, rolledBack: false, code: 'ABORT_ERR' });
    expect(session.snapshots).toHaveLength(before);
    expect(await session.filesystem.exists('x.txt')).toBe(false);
  });

  it("a handler that still reports the old `EABORT` code is reported with the protocol's `ABORT_ERR`", async () => {
    const session = await open();
    const legacy = defineTool({
      name: 'legacy_abort',
      description: 'fails the way handlers written before ABORT_ERR did',
      parameters: z.object({}),
      handler: async () => ({ success: false, message: 'stopped', value: { code: 'EABORT' } }),
    });
    expect(await session.runTool(legacy, {})).toMatchObject({ success: false, code: 'ABORT_ERR', rolledBack: true });
  });

  it('an abort waits for the operation in flight, so it cannot land after the rollback', async () => {
    const session = await open();
    // A slow write: it lands 50 ms after the abort unless the session waits for it.
    // (Captured here: inside a call, session.filesystem is the call's view, closed once the call is over.)
    const real = session.filesystem;
    const workspace = real as unknown as Record<string, unknown>;
    const original = real.writeBytes;
    workspace.writeBytes = async (...args: Parameters<typeof original>) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return original.apply(real, args);
    };
    const controller = new AbortController();
    const tool = defineTool({
      name: 'big_write',
      description: 'aborts itself in the middle of a write',
      parameters: z.object({}),
      async handler(_params, { filesystem }) {
        const writing = filesystem.writeBytes('big.bin', new Uint8Array(4 * 1024 * 1024));
        controller.abort();
        await writing;
        await new Promise(() => undefined);
        return { success: true, message: 'never' };
      },
    });
    const result = await session.runTool(tool, {}, { signal: controller.signal });
    expect(result).toMatchObject({ rolledBack: true, code: 'ABORT_ERR' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await session.filesystem.exists('big.bin')).toBe(false);
  });

  it('concurrent calls are serialised: none interleaves inside another, and a rollback undoes only its own call', async () => {
    const session = await open();
    const events: string[] = [];
    const tool = defineTool({
      name: 'step',
      description: 'writes, waits, maybe fails',
      parameters: z.object({ id: z.string(), fail: z.boolean() }),
      async handler({ id, fail }, { filesystem }) {
        events.push(`start ${id}`);
        await filesystem.write(`${id}.txt`, id);
        await new Promise((resolve) => setTimeout(resolve, 10));
        const seen = (await filesystem.list('/')).map((entry) => entry.name).join(',');
        events.push(`end ${id} saw ${seen}`);
        return { success: !fail, message: id };
      },
    });
    const results = await Promise.all([
      session.runTool(tool, { id: 'a', fail: false }),
      session.runTool(tool, { id: 'b', fail: true }),
      session.runTool(tool, { id: 'c', fail: false }),
    ]);
    expect(events).toEqual(['start a', 'end a saw a.txt', 'start b', 'end b saw a.txt,b.txt', 'start c', 'end c saw a.txt,c.txt']);
    expect(results.map((r) => r.rolledBack)).toEqual([false, true, false]);
    expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'a', 'c.txt': 'c' });
    expect(session.calls.map((entry) => entry.result.message)).toEqual(['a', 'b', 'c']);
  });

  it('a tool cannot call back into its own session (it would deadlock), dispose or seal the workspace', async () => {
    const session = await open();
    const tool = defineTool({
      name: 'reentrant',
      description: 'misbehaves',
      parameters: z.object({ what: z.enum(['runTool', 'dispose', 'seal']) }),
      async handler({ what }, context: ToolContext) {
        if (what === 'runTool') await context.session.runTool(writeTool, { files: { 'x.txt': 'x' } });
        if (what === 'dispose') await context.filesystem.dispose();
        if (what === 'seal') context.filesystem.seal();
        return { success: true, message: 'should not get here' };
      },
    });
    for (const what of ['runTool', 'dispose', 'seal'] as const) {
      const result = await session.runTool(tool, { what });
      expect(result).toMatchObject({ success: false, code: 'EINVAL', rolledBack: true });
    }
    expect(session.filesystem.readOnly).toBe(false);
    expect(await session.filesystem.list('/')).toEqual([]);
  });

  it('rollbackTo undoes several calls at once', async () => {
    const session = await open();
    for (const id of ['1', '2', '3']) await session.runTool(writeTool, { files: { [`${id}.txt`]: id } });
    expect(session.snapshots).toHaveLength(3);
    await session.rollbackTo(session.snapshots[1]!);
    expect(await contentsOf(session.filesystem)).toEqual({ '1.txt': '1' });
    // Later snapshots stay valid (redo).
    await session.rollbackTo(session.snapshots[2]!);
    expect(await contentsOf(session.filesystem)).toEqual({ '1.txt': '1', '2.txt': '2' });
    await session.rollbackTo(session.snapshots[0]!);
    expect(await session.filesystem.list('/')).toEqual([]);
  });

  it('reset gives a fresh workspace with the sources hydrated again (picking up host changes) and empty history', async () => {
    const source = host.tree({ 'a.txt': 'one' });
    const session = await open({ sources: [{ hostPath: source, path: 'm' }], allowedHostRoots: [source] });
    const first = session.filesystem;
    await session.runTool(writeTool, { files: { 'm/a.txt': 'changed', 'extra.txt': 'x' } });
    writeFileSync(join(source, 'b.txt'), 'two');
    await session.reset();
    expect(session.filesystem).not.toBe(first);
    expect(await contentsOf(session.filesystem)).toEqual({ 'm/': '', 'm/a.txt': 'one', 'm/b.txt': 'two' });
    expect(session.calls).toEqual([]);
    expect(session.snapshots).toEqual([]);
    expect(session.hydration).toMatchObject({ files: 2 });
  });

  it('a reset whose hydration fails leaves the session without a workspace until a reset succeeds', async () => {
    const source = host.tree({ 'a.txt': 'small' });
    const session = await open({ sources: [{ hostPath: source, path: 'm', maxBytes: 10 }], allowedHostRoots: [source] });
    writeFileSync(join(source, 'b.txt'), 'now over the budget');
    await expect(session.reset()).rejects.toMatchObject({ code: 'EFBIG' });
    expect(() => session.filesystem).toThrow(/reset failed/);
    await expect(session.runTool(writeTool, { files: {} })).rejects.toThrow(/reset failed/);
    writeFileSync(join(source, 'b.txt'), 'ok');
    await session.reset();
    expect(await contentsOf(session.filesystem)).toEqual({ 'm/': '', 'm/a.txt': 'small', 'm/b.txt': 'ok' });
  });

  it('dispose removes what the session created, is idempotent, and ends the session', async () => {
    const session = await createSession({ backend });
    const root = session.filesystem.root;
    const gitDir = (session.filesystem as { gitDir?: string }).gitDir;
    await session.filesystem.write('a.txt', 'a');
    await session[Symbol.asyncDispose]();
    await session.dispose();
    if (backend === 'host') {
      expect(existsSync(root)).toBe(false);
      expect(existsSync(gitDir as string)).toBe(false);
    }
    expect(() => session.filesystem).toThrow(/disposed/);
    await expect(session.runTool(writeTool, { files: {} })).rejects.toThrow(/disposed/);
    await expect(session.reset()).rejects.toThrow(/disposed/);
  });

  it('a read-only session hydrates then seals: writes fail with EROFS and calls take no snapshot', async () => {
    const source = host.tree({ 'a.txt': 'a' });
    const session = await open({ readOnly: true, sources: [{ hostPath: source, path: '/' }], allowedHostRoots: [source] });
    expect(session.filesystem.readOnly).toBe(true);
    const result = await session.runTool(writeTool, { files: { 'b.txt': 'b' } });
    expect(result).toMatchObject({ success: false, rolledBack: false, code: 'EROFS' });
    const read = defineTool({
      name: 'read',
      description: 'read',
      parameters: z.object({ path: z.string() }),
      handler: async ({ path }, { filesystem }) => ({ success: true, message: (await filesystem.read(path)).content }),
    });
    expect(await session.runTool(read, { path: 'a.txt' })).toEqual({ success: true, message: 'a', rolledBack: false });
    expect(session.snapshots).toEqual([]);
    await session.reset();
    expect(session.filesystem.readOnly).toBe(true);
    expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'a' });
  });

  it('refuses sources without allowed roots, and a failed hydration leaves nothing behind', async () => {
    const source = host.tree({ 'a.txt': 'a' });
    await expect(createSession({ backend, sources: [{ hostPath: source }] })).rejects.toMatchObject({ name: 'PathEscapeError' });
    await expect(
      createSession({ backend, sources: [{ hostPath: source, maxBytes: 0 }], allowedHostRoots: [source] }),
    ).rejects.toMatchObject({ code: 'EFBIG' });
    await expect(createSession({ backend: 'nope' as never })).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it('a failure the handler catches itself does not roll back', async () => {
    const session = await open();
    const tool = defineTool({
      name: 'tolerant',
      description: 'tolerant',
      parameters: z.object({}),
      async handler(_params, { filesystem }) {
        await filesystem.write('a.txt', 'a');
        await filesystem.read('missing').catch((error: unknown) => expect(error).toBeInstanceOf(FileNotFoundError));
        return { success: true, message: 'fine' };
      },
    });
    expect(await session.runTool(tool, {})).toMatchObject({ success: true, rolledBack: false });
    expect(await session.filesystem.exists('a.txt')).toBe(true);
  });
});

describe('host sessions on a given root', () => {
  const host = hostTrees();

  it('keep the root on dispose, and reset puts it back as it was before hydration', async () => {
    const root = host.tree({ 'own.txt': 'the user file' });
    const gitDir = host.dir();
    const source = host.tree({ 'm.txt': 'mounted' });
    const session = await createSession({
      backend: 'host',
      root,
      gitDir,
      sources: [{ hostPath: source, path: 'mnt' }],
      allowedHostRoots: [source],
    });
    try {
      await session.runTool(writeTool, { files: { 'new.txt': 'n', 'own.txt': 'changed' } });
      await session.reset();
      expect(await contentsOf(session.filesystem)).toEqual({ 'mnt/': '', 'mnt/m.txt': 'mounted', 'own.txt': 'the user file' });
    } finally {
      await session.dispose();
    }
    expect(existsSync(join(root, 'own.txt'))).toBe(true);
  });

  it('a memory session refuses host-only options', async () => {
    await expect(createSession({ backend: 'memory', root: '/tmp/x' })).rejects.toMatchObject({ code: 'EINVAL' });
  });
});

describe('spellings of earlier versions', () => {
  const host = hostTrees();

  it('refuses mounts (now sources) and a source with mountPath (now path), naming the new word', async () => {
    const source = host.tree({ 'a.txt': 'a' });
    const old = await caught(() =>
      createSession({ backend: 'memory', mounts: [{ hostPath: source }], allowedHostRoots: [source] } as never),
    );
    expect(old).toMatchObject({ name: 'InvalidArgumentError', code: 'EINVAL' });
    expect(old.message).toContain('`mounts` is now `sources`');
    const oldKey = await caught(() =>
      createSession({ backend: 'memory', sources: [{ hostPath: source, mountPath: 'm' } as never], allowedHostRoots: [source] }),
    );
    expect(oldKey).toMatchObject({ name: 'InvalidArgumentError', code: 'EINVAL' });
    expect(oldKey.message).toContain('`mountPath` is now `path`');
  });
});
