import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { WatchEvent } from '../../src/workspace/watch-event.js';
import { createSession, defineTool, type HydratedSession } from '../../src/session/index.js';
import { SESSION_KINDS } from '../support/backends.js';

const writeThenFail = defineTool({
  name: 'write_then_fail',
  description: 'Writes a file, then fails',
  parameters: z.object({}),
  async handler(_params, { filesystem }) {
    await filesystem.write('draft.txt', 'half done');
    await filesystem.delete('keep.txt');
    throw new Error('the tool broke');
  },
});

describe('watch on a session', () => {
  const sessions: HydratedSession[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
  });

  it.each(SESSION_KINDS)('%s: a rolled-back tool call reports its changes, then their undoing', async (backend) => {
    const session = await createSession({ backend });
    sessions.push(session);
    await session.filesystem.write('keep.txt', 'keep');
    const seen: WatchEvent[] = [];
    const controller = new AbortController();
    const watching = (async () => {
      for await (const event of session.filesystem.watch({ signal: controller.signal })) seen.push(event);
    })();
    const result = await session.runTool(writeThenFail, {});
    expect(result).toMatchObject({ success: false, rolledBack: true });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await watching;
    const [done, undone] = [seen.slice(0, 2), seen.slice(2).sort((a, b) => a.path.localeCompare(b.path))];
    expect(done).toEqual([
      { type: 'created', path: 'draft.txt' },
      { type: 'deleted', path: 'keep.txt' },
    ]);
    expect(undone).toEqual([
      { type: 'deleted', path: 'draft.txt' },
      { type: 'created', path: 'keep.txt' },
    ]);
  });
});
