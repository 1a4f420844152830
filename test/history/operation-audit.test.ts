import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HistoryOperation, SessionHistory } from '../../src/history/index.js';
import { createSession, defineTool } from '../../src/session/index.js';
import { localSessionStore } from '../../src/store/local-store.js';

const operations = (history: SessionHistory): HistoryOperation[] => history.turns.flatMap((turn) => turn.operations);

/** Writes `count` files, then reads a missing one (an audited failure the call survives). */
const writeMany = defineTool({
  name: 'write_many',
  description: 'writes count files',
  parameters: z.object({ count: z.number() }),
  handler: async ({ count }, { filesystem }) => {
    for (let index = 0; index < count; index += 1) await filesystem.write(`f${index}.txt`, 'x'.repeat(index));
    await filesystem.exists('missing.txt');
    await filesystem.read('missing.txt').catch(() => undefined);
    return { success: true, message: 'written' };
  },
});

describe("a stored session's operations keep their audit events", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sessionfs-op-audit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("each call its own events (no contents), the orchestrator's changes theirs; kept across openings", async () => {
    const store = localSessionStore({ dir });
    const session = await createSession({ store, sessionId: 's' });
    await session.filesystem.write('seed.txt', 'secret contents');
    await session.runTool(writeMany, { count: 2 });
    await session.runTool(writeMany, { count: 1 });
    await session.dispose();

    const reopened = await createSession({ store, sessionId: 's', readOnly: true });
    const history = await reopened.history();
    await reopened.dispose();
    const [change, first, second] = operations(history);
    const brief = (operation: HistoryOperation | undefined) =>
      operation?.audit?.map(({ op, path, outcome, code, bytes }) => [op, path, outcome, code, bytes]);
    expect(brief(change)).toEqual([['write', 'seed.txt', 'ok', undefined, 15]]);
    // The call's own events: its rollback point, what its handler did, and the call as a whole.
    expect(brief(first)).toEqual([
      ['snapshot', undefined, 'ok', undefined, undefined],
      ['write', 'f0.txt', 'ok', undefined, 0],
      ['write', 'f1.txt', 'ok', undefined, 1],
      ['exists', 'missing.txt', 'ok', undefined, undefined],
      ['read', 'missing.txt', 'failed', 'ENOENT', undefined],
      ['toolCall', undefined, 'ok', undefined, undefined],
    ]);
    expect(brief(second)?.map((event) => event[1])).toEqual([undefined, 'f0.txt', 'missing.txt', 'missing.txt', undefined]);
    expect(JSON.stringify(history)).not.toContain('secret');
  });

  it('keeps at most 200 events per operation and counts the rest', async () => {
    await using session = await createSession({ store: localSessionStore({ dir }), sessionId: 'many' });
    await session.runTool(writeMany, { count: 205 });
    const [call] = operations(await session.history());
    expect(call?.audit).toHaveLength(200);
    // A snapshot, 205 writes, an exists, a read and the call itself: the first 200 are kept.
    expect(call?.audit?.at(-1)?.path).toBe('f198.txt');
    expect(call?.auditOmitted).toBe(9);
  });

  it('a session without a store records none (the cost stays with stored sessions)', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.runTool(writeMany, { count: 2 });
    expect(operations(await session.history()).map((operation) => operation.audit)).toEqual([undefined]);
  });
});
