import { describe, expect, it } from 'vitest';
import { NothingToRedoError, NothingToUndoError } from '../../src/history/index.js';
import type { HistoryOperation, SessionHistory } from '../../src/history/index.js';
import { createSession } from '../../src/session/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import type { WorkspaceToolName } from '../../src/tools/index.js';
import { contentsOf, expectError } from '../../src/testing/harness.js';
import type { Session } from '../../src/session/types.js';
import { SESSION_KINDS } from '../support/backends.js';

const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
const run = (session: Session, name: WorkspaceToolName, params: unknown) => session.runTool(tools.get(name)!, params);
const operations = (history: SessionHistory): HistoryOperation[] => history.turns.flatMap((turn) => turn.operations);

describe('session.history()', () => {
  for (const backend of SESSION_KINDS) {
    it(`records calls, orchestrator changes and reads in turns, with actor, summary, changed paths and snapshots (${backend})`, async () => {
      await using session = await createSession({ backend });
      await session.filesystem.write('seed.txt', 'seeded by the orchestrator\n');
      await session.filesystem.mkdir('docs');
      const first = await session.turn('first response');
      await run(session, 'write_file', { path: 'a.ts', content: 'export const a = 1;\n'.repeat(20) });
      await run(session, 'read_file', { path: 'a.ts' });
      await run(session, 'edit_file', { path: 'a.ts', old_string: 'missing', new_string: 'x' });
      const history = await session.history();
      expect(JSON.parse(JSON.stringify(history))).toEqual(history);
      expect(history.sessionId).toBe(session.id);

      // The two outside changes before the turn are one orchestrator operation in a turn of its own.
      const [outside, turn] = history.turns;
      expect(outside?.operations).toEqual([
        expect.objectContaining({
          actor: 'orchestrator',
          kind: 'change',
          tool: 'changes',
          summary: 'write seed.txt (27 bytes); mkdir docs',
          changed: [{ path: 'seed.txt', status: 'added' }],
        }),
      ]);
      expect(turn).toMatchObject({ id: first, label: 'first response', kind: 'turn', undone: false });
      const [write, read, failed] = turn!.operations;
      expect(write).toMatchObject({
        actor: 'model',
        kind: 'call',
        tool: 'write_file',
        outcome: 'ok',
        changed: [{ path: 'a.ts', status: 'added' }],
      });
      // A summary names the path and the size of the content, never the content.
      expect(write?.summary).toBe('path="a.ts" content=<400 chars, 21 lines>');
      expect(write?.before).toBe(outside?.operations[0]?.after);
      expect(write?.after).toEqual(expect.any(String));
      expect(write?.callId).toBe(session.calls[0]?.callId);
      expect(read).toMatchObject({ tool: 'read_file', changed: [], before: write?.after, after: write?.after });
      expect(failed).toMatchObject({ tool: 'edit_file', outcome: 'failed', code: 'EINVAL', changed: [] });
      expect(history).toMatchObject({ canUndo: true, canRedo: false, dropped: 0 });
    });
  }

  it('without session.turn(), each operation is a turn of its own; actor comes from runTool', async () => {
    await using session = await createSession({ backend: 'memory' });
    await run(session, 'write_file', { path: 'a.txt', content: 'a' });
    await session.runTool(tools.get('write_file')!, { path: 'b.txt', content: 'b' }, { actor: 'user' });
    const history = await session.history();
    expect(history.turns.map((turn) => turn.operations.map((op) => [op.actor, op.tool]))).toEqual([
      [['model', 'write_file']],
      [['user', 'write_file']],
    ]);
    await expect(session.runTool(tools.get('write_file')!, { path: 'c', content: '' }, { actor: 'robot' as 'user' })).rejects.toThrow(
      /actor must be one of model, orchestrator, user/,
    );
    expect(await session.filesystem.exists('c')).toBe(false);
  });

  it('records rollbackTo as a restore operation', async () => {
    await using session = await createSession({ backend: 'memory' });
    await run(session, 'write_file', { path: 'a.txt', content: 'one' });
    await run(session, 'write_file', { path: 'a.txt', content: 'two' });
    await session.rollbackTo(session.snapshots[1]!);
    const last = operations(await session.history()).at(-1);
    expect(last).toMatchObject({
      actor: 'orchestrator',
      kind: 'restore',
      tool: 'rollbackTo',
      changed: [{ path: 'a.txt', status: 'modified' }],
    });
  });

  it('keeps the newest retention.maxHistory operations and counts the dropped', async () => {
    await using session = await createSession({ backend: 'memory', retention: { maxHistory: 3, maxSnapshots: 2 } });
    for (let index = 0; index < 6; index += 1) await run(session, 'write_file', { path: 'a.txt', content: `v${index}` });
    const history = await session.history();
    expect(operations(history).map((op) => op.id)).toEqual(['op-4', 'op-5', 'op-6']);
    expect(history.dropped).toBe(3);
    // The newest turn still undoes; the snapshots retention released no longer do (typed error, nothing changed).
    await session.undo();
    expect((await session.filesystem.read('a.txt')).content).toBe('v4');
    await expectError(session.undo(), 'SnapshotRestoreError', 'ESNAPSHOT');
    expect((await session.filesystem.read('a.txt')).content).toBe('v4');
  });
});

describe('undo() and redo() by turn', () => {
  for (const backend of SESSION_KINDS) {
    it(`undo restores the state before the last turn and is recorded; redo re-applies; nothing is lost (${backend})`, async () => {
      await using session = await createSession({ backend });
      await session.turn('one');
      await run(session, 'write_file', { path: 'a.txt', content: 'A1\n' });
      await session.turn('two');
      await run(session, 'write_file', { path: 'a.txt', content: 'A2\n' });
      await run(session, 'write_file', { path: 'b.txt', content: 'B\n' });
      const afterTwo = await contentsOf(session.filesystem);

      const undone = await session.undo();
      expect(undone).toMatchObject({ kind: 'undo', tool: 'undo', actor: 'orchestrator', target: 'turn-2' });
      expect(undone.changed).toEqual([
        { path: 'a.txt', status: 'modified' },
        { path: 'b.txt', status: 'deleted' },
      ]);
      expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'A1\n' });
      let history = await session.history();
      expect(history.turns.map((turn) => [turn.kind, turn.undone])).toEqual([
        ['turn', false],
        ['turn', true],
        ['undo', false],
      ]);
      expect(history).toMatchObject({ canUndo: true, canRedo: true });

      await session.undo({ actor: 'user' });
      expect(await contentsOf(session.filesystem)).toEqual({});
      await expectError(session.undo(), 'NothingToUndoError', 'EINVAL');
      await session.redo();
      expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'A1\n' });
      const redone = await session.redo();
      expect(redone).toMatchObject({ kind: 'redo', target: 'turn-2' });
      expect(await contentsOf(session.filesystem)).toEqual(afterTwo);
      await expectError(session.redo(), 'NothingToRedoError', 'EINVAL');
      history = await session.history();
      expect(history.turns.every((turn) => !turn.undone)).toBe(true);
      expect(history.turns.map((turn) => turn.kind)).toEqual(['turn', 'turn', 'undo', 'undo', 'redo', 'redo']);
    });
  }

  it('a new change after an undo clears redo; the undone turn stays in the history, its state restorable', async () => {
    await using session = await createSession({ backend: 'memory' });
    await run(session, 'write_file', { path: 'a.txt', content: 'kept' });
    await run(session, 'write_file', { path: 'a.txt', content: 'undone' });
    await session.undo();
    await session.filesystem.write('b.txt', 'new work');
    await expectError(session.redo(), 'NothingToRedoError', 'EINVAL');
    const history = await session.history();
    const undoneTurn = history.turns.find((turn) => turn.undone);
    expect(undoneTurn?.operations[0]?.summary).toContain('a.txt');
    // Reachable: a fork at its after-state has its content.
    await using fork = await session.fork({ at: undoneTurn!.operations[0]!.after! });
    expect((await fork.filesystem.read('a.txt')).content).toBe('undone');
    // Undo now undoes the newest change, then the turn before the undone one.
    await session.undo();
    expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'kept' });
    await session.undo();
    expect(await contentsOf(session.filesystem)).toEqual({});
  });

  it('skips turns that changed nothing; refuses with nothing to undo or redo, changing nothing', async () => {
    await using session = await createSession({ backend: 'memory' });
    await expectError(session.undo(), NothingToUndoError.name, 'EINVAL');
    await expectError(session.redo(), NothingToRedoError.name, 'EINVAL');
    await run(session, 'write_file', { path: 'a.txt', content: 'a' });
    await session.turn('reads only');
    await run(session, 'read_file', { path: 'a.txt' });
    await session.undo();
    expect(await session.filesystem.exists('a.txt')).toBe(false);
    const before = await session.history();
    await expect(session.undo()).rejects.toBeInstanceOf(NothingToUndoError);
    expect(await session.history()).toEqual(before);
  });

  it('undo is refused inside a tool call on the same session (it would wait for itself)', async () => {
    await using session = await createSession({ backend: 'memory' });
    const { defineTool } = await import('../../src/session/index.js');
    const { z } = await import('zod');
    const tool = defineTool({
      name: 'undo_inside',
      description: 'calls undo',
      parameters: z.object({}),
      handler: async (_params, context) => {
        await context.session.undo();
        return { success: true, message: 'done' };
      },
    });
    const result = await session.runTool(tool, {});
    expect(result).toMatchObject({ success: false, message: expect.stringContaining('undo cannot be called from inside a tool call') });
  });
});

describe('session.fork({ at })', () => {
  for (const backend of SESSION_KINDS) {
    it(`forks from any snapshot of the session, by record or id, recorded as the fork's first operation (${backend})`, async () => {
      await using session = await createSession({ backend });
      await run(session, 'write_file', { path: 'a.txt', content: 'one' });
      await run(session, 'write_file', { path: 'a.txt', content: 'two' });
      await run(session, 'write_file', { path: 'b.txt', content: 'b' });
      const history = await session.history();
      const afterFirst = operations(history)[0]!.after!;

      await using byId = await session.fork({ at: afterFirst });
      expect(await contentsOf(byId.filesystem)).toEqual({ 'a.txt': 'one' });
      const forked = operations(await byId.history()).at(-1);
      expect(forked).toMatchObject({ kind: 'restore', tool: 'fork', summary: `forked from ${session.id} at ${afterFirst}` });
      // The parent is untouched, and the fork undoes its starting point back to where the parent was.
      expect(await contentsOf(session.filesystem)).toEqual({ 'a.txt': 'two', 'b.txt': 'b' });
      await byId.undo();
      expect(await contentsOf(byId.filesystem)).toEqual({ 'a.txt': 'two', 'b.txt': 'b' });

      await using byRecord = await session.fork({ at: session.snapshots[1]! });
      expect(await contentsOf(byRecord.filesystem)).toEqual({ 'a.txt': 'one' });
    });
  }

  it("refuses another session's snapshot and unknown options, creating nothing", async () => {
    await using session = await createSession({ backend: 'memory' });
    await using other = await createSession({ backend: 'memory' });
    await run(other, 'write_file', { path: 'x', content: 'x' });
    await run(session, 'write_file', { path: 'a', content: 'a' });
    await expectError(session.fork({ at: other.snapshots[0]! }), 'SnapshotRestoreError', 'ESNAPSHOT');
    await expectError(session.fork({ at: 'no-such-id' }), 'SnapshotRestoreError', 'ESNAPSHOT');
    await expectError(session.fork({ at: 42 as unknown as string }), 'InvalidArgumentError', 'EINVAL');
    await expectError(session.fork({ at: 'x', from: 1 } as never), 'InvalidArgumentError', 'EINVAL');
    expect(operations(await session.history()).map((op) => op.tool)).toEqual(['write_file']);
  });
});
