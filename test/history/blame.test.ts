import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSession, defineTool } from '../../src/session/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { expectError } from '../../src/testing/harness.js';
import type { Session } from '../../src/session/types.js';
import type { WorkspaceToolName } from '../../src/tools/index.js';
import { SESSION_KINDS } from '../support/backends.js';

const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
const run = async (session: Session, name: WorkspaceToolName, params: unknown): Promise<void> => {
  const result = await session.runTool(tools.get(name)!, params);
  if (!result.success) throw new Error(result.message);
};
/** Each line's operation id (or `-` for a line older than the history). */
const owners = async (session: Session, path: string): Promise<string[]> =>
  (await session.blame(path)).lines.map((line) => `${line.text}:${line.operationId ?? '-'}`);

describe('session.blame(path)', () => {
  for (const backend of SESSION_KINDS) {
    it(`gives each line the operation that last changed it, through edits and renames (${backend})`, async () => {
      await using session = await createSession({ backend });
      await run(session, 'write_file', { path: 'a.txt', content: 'one\ntwo\nthree\n' }); // op-1
      await run(session, 'edit_file', { path: 'a.txt', old_string: 'two', new_string: 'TWO' }); // op-2
      await run(session, 'move', { source: 'a.txt', destination: 'b.txt' }); // op-3
      await run(session, 'edit_file', { path: 'b.txt', old_string: 'three', new_string: 'three\nfour' }); // op-4
      const blame = await session.blame('b.txt');
      expect(JSON.parse(JSON.stringify(blame))).toEqual(blame);
      expect(blame.path).toBe('b.txt');
      expect(blame.lines[0]).toEqual({ line: 1, text: 'one', operationId: 'op-1', turnId: 'turn-1', actor: 'model', tool: 'write_file' });
      expect(await owners(session, 'b.txt')).toEqual(['one:op-1', 'TWO:op-2', 'three:op-1', 'four:op-4']);
    });
  }

  it('gives lines older than the history kept no operation', async () => {
    await using session = await createSession({ backend: 'memory', retention: { maxHistory: 2 } });
    await run(session, 'write_file', { path: 'a.txt', content: 'old\n' });
    await session.filesystem.write('a.txt', 'old\norchestrated\n');
    await run(session, 'read_file', { path: 'a.txt' });
    await run(session, 'write_file', { path: 'a.txt', content: 'old\norchestrated\nmodel\n' });
    // op-1 (which wrote `old`) and op-2 were dropped by retention.
    const blame = await session.blame('a.txt');
    expect(blame.lines.map((line) => [line.text, line.operationId, line.actor])).toEqual([
      ['old', undefined, undefined],
      ['orchestrated', undefined, undefined],
      ['model', 'op-4', 'model'],
    ]);
  });

  it('a restore that brings back earlier bytes gives the lines their first writers; one that does not owns what it changed', async () => {
    await using session = await createSession({ backend: 'memory' });
    await run(session, 'write_file', { path: 'a.txt', content: 'one\ntwo\n' }); // op-1
    await run(session, 'write_file', { path: 'a.txt', content: 'one\nchanged\n' }); // op-2
    await session.undo(); // op-3: back to op-1's bytes
    expect(await owners(session, 'a.txt')).toEqual(['one:op-1', 'two:op-1']);
    await session.redo(); // op-4: back to op-2's bytes
    expect(await owners(session, 'a.txt')).toEqual(['one:op-1', 'changed:op-2']);
    const other = await session.filesystem.snapshot();
    await run(session, 'write_file', { path: 'a.txt', content: 'one\nthird\n' }); // op-5
    await session.filesystem.write('a.txt', 'one\nfourth\n'); // op-6 (noted)
    await session.filesystem.restore(other); // with op-6: one orchestrator operation, not only a restore
    expect(await owners(session, 'a.txt')).toEqual(['one:op-1', 'changed:op-6']);
  });

  it('refuses a missing path, a directory and a file that is not UTF-8, typed', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.writeBytes('bin', new Uint8Array([0xff, 0xfe, 0x00]));
    await session.filesystem.mkdir('dir');
    await expectError(session.blame('missing'), 'FileNotFoundError', 'ENOENT');
    await expectError(session.blame('dir'), 'IsADirectoryError', 'EISDIR');
    await expectError(session.blame('bin'), 'InvalidContentError', 'EILSEQ');
    await expectError(session.blame('../x'), 'PathEscapeError', 'EACCES');
  });

  it('reads only the states retention kept: older lines have no operation', async () => {
    await using session = await createSession({ backend: 'memory', retention: { maxSnapshots: 3 } });
    for (let edit = 0; edit < 6; edit += 1)
      await session.filesystem.write('a.txt', `${edit}\n`, { mode: 'append' }).then(() => session.history());
    expect(await owners(session, 'a.txt')).toEqual(['0:-', '1:-', '2:-', '3:-', '4:op-5', '5:op-6']);
  });

  it('blames a 5,000-line file after 200 edits quickly', async () => {
    await using session = await createSession({ backend: 'memory', retention: { maxSnapshots: 1000 } });
    const lines = Array.from({ length: 5000 }, (_, index) => `line ${index}`);
    await session.filesystem.write('big.txt', `${lines.join('\n')}\n`);
    const put = defineTool({
      name: 'put',
      description: 'writes a whole file',
      parameters: z.object({ path: z.string(), content: z.string() }),
      handler: async ({ path, content }, { filesystem }) => {
        await filesystem.write(path, content);
        return { success: true, message: 'written' };
      },
    });
    for (let edit = 0; edit < 200; edit += 1) {
      lines[edit * 25] = `edited ${edit}`;
      await session.runTool(put, { path: 'big.txt', content: `${lines.join('\n')}\n` });
    }
    const started = performance.now();
    const blame = await session.blame('big.txt');
    const elapsed = performance.now() - started;
    // op-1 the orchestrator's write, op-2 the first edit.
    expect(blame.lines[25]).toMatchObject({ text: 'edited 1', operationId: 'op-3' });
    expect(blame.lines[26]).toMatchObject({ text: 'line 26', operationId: 'op-1' });
    expect(elapsed).toBeLessThan(2000);
  });
});
