import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSession, defineTool, type HydratedSession } from '../../src/session/index.js';
import { contentsOf } from '../../src/testing/harness.js';
import { SESSION_BACKENDS } from '../support/backends.js';

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Writes `call.txt`, tells the test it is running, waits for `release`, then fails (so it is rolled back). */
function blockedFailingTool(started: () => void, release: Promise<void>) {
  return defineTool({
    name: 'blocked_then_failing',
    description: 'writes, waits, fails',
    parameters: z.object({}),
    async handler(_params, { filesystem }) {
      await filesystem.write('call.txt', 'from the call');
      started();
      await release;
      return { success: false, message: 'gave up' };
    },
  });
}

describe.each(SESSION_BACKENDS)('outside operations during a call on $name', ({ session: backend }) => {
  const sessions: HydratedSession[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
  });
  async function open(): Promise<HydratedSession> {
    const session = await createSession({ backend });
    sessions.push(session);
    return session;
  }

  it("an orchestrator's write during a running call waits for it, so the call's rollback never undoes it", async () => {
    const session = await open();
    await session.filesystem.write('keep.txt', 'kept');
    const running = gate();
    const release = gate();
    const call = session.runTool(blockedFailingTool(running.open, release.opened), {});
    await running.opened;

    let landed = false;
    const outside = session.filesystem.write('outside.txt', 'from the orchestrator').then(() => {
      landed = true;
    });
    const deleted = session.filesystem.delete('keep.txt');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(landed).toBe(false); // still waiting for the call

    release.open();
    expect(await call).toMatchObject({ success: false, rolledBack: true });
    await Promise.all([outside, deleted]);
    expect(await contentsOf(session.filesystem)).toEqual({ 'outside.txt': 'from the orchestrator' });
  });

  it("an orchestrator's writeFiles during a running call waits for it: the rollback keeps it and the history has it", async () => {
    const session = await open();
    const running = gate();
    const release = gate();
    const call = session.runTool(blockedFailingTool(running.open, release.opened), {});
    await running.opened;
    let landed = false;
    const outside = session.filesystem.writeFiles!([
      { path: 'bulk.txt', kind: 'file', content: new TextEncoder().encode('from the orchestrator') },
    ]).then(() => {
      landed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const landedDuringCall = landed;
    release.open();
    expect(landedDuringCall).toBe(false); // it waited for the call
    expect(await call).toMatchObject({ success: false, rolledBack: true });
    await outside;
    expect(await contentsOf(session.filesystem)).toEqual({ 'bulk.txt': 'from the orchestrator' });
    const recorded = (await session.history()).turns.flatMap((turn) => turn.operations);
    expect(recorded.filter((operation) => operation.changed.some((entry) => entry.path === 'bulk.txt'))).toHaveLength(1);
  });

  it('snapshotTree and patch from outside never see a call half done', async () => {
    const session = await open();
    await session.filesystem.write('keep.txt', 'kept');
    const before = await session.filesystem.snapshot();
    const running = gate();
    const release = gate();
    const call = session.runTool(blockedFailingTool(running.open, release.opened), {});
    await running.opened;
    const tree = session.filesystem.snapshotTree();
    const patch = session.filesystem.patch(before);
    release.open();
    expect(await call).toMatchObject({ success: false, rolledBack: true });
    expect(await (await tree).entry('call.txt')).toBeUndefined();
    expect(await (await tree).entry('keep.txt')).toBeDefined();
    expect(await patch).not.toContain('call.txt');
  });

  it('a write stream opened outside commits after a running call, so its rollback never undoes it', async () => {
    const session = await open();
    const writer = (await session.filesystem.createWriteStream('streamed.txt')).getWriter();
    await writer.write(new TextEncoder().encode('from a stream'));
    const running = gate();
    const release = gate();
    const call = session.runTool(blockedFailingTool(running.open, release.opened), {});
    await running.opened;
    let committed = false;
    const closing = writer.close().then(() => {
      committed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(committed).toBe(false); // the commit waits for the call
    release.open();
    expect(await call).toMatchObject({ success: false, rolledBack: true });
    await closing;
    expect(await contentsOf(session.filesystem)).toEqual({ 'streamed.txt': 'from a stream' });
  });

  it('a read from outside never sees a call half done', async () => {
    const session = await open();
    const running = gate();
    const release = gate();
    const call = session.runTool(blockedFailingTool(running.open, release.opened), {});
    await running.opened;
    const seen = session.filesystem.exists('call.txt');
    release.open();
    await call;
    expect(await seen).toBe(false);
  });

  it('an outside write asked for before a call lands before its snapshot, and survives its rollback', async () => {
    const session = await open();
    const release = gate();
    release.open();
    const outside = session.filesystem.write('outside.txt', 'first');
    const result = await session.runTool(
      blockedFailingTool(() => undefined, release.opened),
      {},
    );
    await outside;
    expect(result.rolledBack).toBe(true);
    expect(await contentsOf(session.filesystem)).toEqual({ 'outside.txt': 'first' });
  });

  it('outside operations run side by side, and a later call waits for them', async () => {
    const session = await open();
    const writes = Array.from({ length: 20 }, (_, index) => session.filesystem.write(`f${index}.txt`, String(index)));
    const listed = await session.runTool(
      defineTool({
        name: 'count',
        description: 'counts files',
        parameters: z.object({}),
        async handler(_params, { filesystem }) {
          return { success: true, message: 'counted', value: (await filesystem.list('/')).length };
        },
      }),
      {},
    );
    await Promise.all(writes);
    expect(listed.value).toBe(20);
  });
});
