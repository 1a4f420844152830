import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { loadHistory } from '../../src/session/stored-history.js';
import { localSessionStore } from '../../src/store/local-store.js';
import { workspaceTools } from '../../src/shell/index.js';
import type { WorkspaceToolName } from '../../src/tools/index.js';

const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
const tool = (name: WorkspaceToolName) => tools.get(name)!;

describe('a stored session keeps its history with its head', () => {
  let base: string;
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'sessionfs-stored-history-'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('a later opening goes on with the same turns, undo, redo and blame', async () => {
    const dir = join(base, 'resume');
    const first = await createSession({ store: localSessionStore({ dir }), sessionId: 'keep' });
    await first.turn('one');
    await first.runTool(tool('write_file'), { path: 'a.txt', content: 'one\n' });
    await first.turn('two');
    await first.runTool(tool('edit_file'), { path: 'a.txt', old_string: 'one', new_string: 'ONE' });
    await first.runTool(tool('write_file'), { path: 'b.txt', content: 'b\n' });
    const before = await first.history();
    await first.dispose();

    const store = localSessionStore({ dir });
    const head = await store.head('keep');
    expect(head?.history).toMatch(/^[0-9a-f]{64}$/);
    const state = await loadHistory(store.blobs, head!.history!);
    expect(state.history.turns.map((turn) => turn.label)).toEqual(['one', 'two']);

    const second = await createSession({ store, sessionId: 'keep' });
    const resumed = await second.history();
    expect(resumed.turns).toEqual(before.turns);
    expect((await second.blame('a.txt')).lines.map((line) => line.operationId)).toEqual(['op-2']);
    const undone = await second.undo();
    expect(undone.target).toBe('turn-2');
    expect((await second.filesystem.read('a.txt')).content.trimEnd()).toBe('one');
    expect(await second.filesystem.exists('b.txt')).toBe(false);
    await second.dispose();

    // A third process can redo what the second undid: the redo stack is kept too.
    const third = await createSession({ store: localSessionStore({ dir }), sessionId: 'keep' });
    expect((await third.history()).canRedo).toBe(true);
    await third.redo();
    expect((await third.filesystem.read('b.txt')).content.trimEnd()).toBe('b');
    const ids = (await third.history()).turns.flatMap((turn) => turn.operations.map((operation) => operation.id));
    expect(ids).toEqual(['op-1', 'op-2', 'op-3', 'op-4', 'op-5']);
    await third.dispose();
  });

  it('gc keeps the history and the states it can undo to', async () => {
    const dir = join(base, 'gc');
    const store = localSessionStore({ dir });
    const session = await createSession({ store, sessionId: 'gc' });
    await session.runTool(tool('write_file'), { path: 'a.txt', content: 'first\n' });
    await session.runTool(tool('write_file'), { path: 'a.txt', content: 'second\n' });
    await session.runTool(tool('write_file'), { path: 'a.txt', content: 'third\n' });
    await session.dispose();
    // Heads keep 5 versions by default: with none kept, only the history names the older states.
    const lean = localSessionStore({ dir, keepVersions: 0 });
    const again = await createSession({ store: lean, sessionId: 'gc' });
    await again.runTool(tool('write_file'), { path: 'a.txt', content: 'fourth\n' });
    await again.dispose();
    await lean.gc({ graceMs: 0 });
    const last = await createSession({ store: localSessionStore({ dir }), sessionId: 'gc' });
    await last.undo();
    await last.undo();
    await last.undo();
    expect((await last.filesystem.read('a.txt')).content.trimEnd()).toBe('first');
    await last.dispose();
  });
});
