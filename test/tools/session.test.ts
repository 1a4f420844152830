import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { type WorkspaceToolName } from '../../src/tools/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { SESSION_KINDS } from '../support/backends.js';

describe('the tool suite through session.runTool', () => {
  for (const backend of SESSION_KINDS) {
    it(`reports codes, rolls back failures and keeps read-before-write across calls and resets (${backend})`, async () => {
      await using session = await createSession({ backend });
      const tools = new Map(workspaceTools({ readBeforeWrite: true }).map((t) => [t.name, t]));
      const run = (name: WorkspaceToolName, params: unknown) => session.runTool(tools.get(name)!, params);

      expect(await run('write_file', { path: 'a.txt', content: 'one\ntwo\n' })).toMatchObject({ success: true, rolledBack: false });
      // Created by the model itself: it may edit it without reading it first.
      expect(await run('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'uno' })).toMatchObject({ success: true });

      const ambiguous = await run('edit_file', { path: 'a.txt', old_string: 'o', new_string: '0' });
      expect(ambiguous).toMatchObject({ success: false, rolledBack: true, code: 'EINVAL', value: { reason: 'ambiguous' } });
      const tooBig = await run('write_file', { path: 'a.txt', content: 'x'.repeat(48_001) });
      expect(tooBig).toMatchObject({ success: false, rolledBack: true, code: 'EFBIG' });
      const invalid = await run('read_file', { path: 42 });
      expect(invalid).toMatchObject({ success: false, rolledBack: false, code: 'EINVAL' });
      expect((await session.filesystem.read('a.txt')).content).toBe('uno\ntwo');

      await session.filesystem.write('b.txt', 'written by someone else\n');
      expect(await run('edit_file', { path: 'b.txt', old_string: 'someone', new_string: 'me' })).toMatchObject({
        success: false,
        code: 'ETOOL',
        rolledBack: true,
      });
      expect(await run('read_file', { path: 'b.txt' })).toMatchObject({ success: true });
      expect(await run('edit_file', { path: 'b.txt', old_string: 'someone', new_string: 'me' })).toMatchObject({ success: true });

      await session.reset();
      await session.filesystem.write('b.txt', 'again\n');
      expect(await run('write_file', { path: 'b.txt', content: 'x' })).toMatchObject({ success: false, code: 'ETOOL' });
    });
  }
});
