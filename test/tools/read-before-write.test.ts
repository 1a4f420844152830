import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { SESSION_KINDS } from '../support/backends.js';

describe('tools: read-before-write through move and copy', () => {
  for (const backend of SESSION_KINDS) {
    it(`a read file replaced by move or copy must be read again before it is overwritten (${backend})`, async () => {
      await using session = await createSession({ backend });
      const tools = new Map(workspaceTools({ readBeforeWrite: true }).map((t) => [t.name, t]));
      const run = (name: WorkspaceToolName, params: unknown) => session.runTool(tools.get(name)!, params);
      for (const name of ['a', 'b', 'c', 'd']) await session.filesystem.write(`${name}.txt`, `${name} by someone else\n`);

      // b.txt was read, then replaced by the unread a.txt: its content is unseen again (reproduced: the write went through).
      expect(await run('read_file', { path: 'b.txt' })).toMatchObject({ success: true });
      expect(await run('move', { source: 'a.txt', destination: 'b.txt', overwrite: true })).toMatchObject({ success: true });
      expect(await run('write_file', { path: 'b.txt', content: 'clobbered' })).toMatchObject({
        success: false,
        code: 'ETOOL',
        value: { reason: 'not_read' },
      });

      expect(await run('read_file', { path: 'd.txt' })).toMatchObject({ success: true });
      expect(await run('copy', { source: 'c.txt', destination: 'd.txt', overwrite: true })).toMatchObject({ success: true });
      expect(await run('edit_file', { path: 'd.txt', old_string: 'c by', new_string: 'd by' })).toMatchObject({
        success: false,
        code: 'ETOOL',
      });
      expect((await session.filesystem.read('d.txt')).content).toBe('c by someone else');

      // A copy of a read file is read; the source stays read.
      expect(await run('read_file', { path: 'c.txt' })).toMatchObject({ success: true });
      expect(await run('copy', { source: 'c.txt', destination: 'e.txt' })).toMatchObject({ success: true });
      expect(await run('write_file', { path: 'e.txt', content: 'e' })).toMatchObject({ success: true });
      expect(await run('write_file', { path: 'c.txt', content: 'c' })).toMatchObject({ success: true });
    });
  }
});
