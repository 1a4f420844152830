import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createSession, defineTool } from '../../src/session/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { SESSION_KINDS } from '../support/backends.js';

for (const backend of SESSION_KINDS) {
  describe(`tools annotated readOnlyHint on ${backend}`, () => {
    it('run without a snapshot before them; the others still get one', async () => {
      await using session = await createSession({ backend });
      await session.filesystem.write('a.txt', 'hello\n');
      const tools = new Map(workspaceTools().map((t) => [t.name, t]));
      const before = session.snapshots.length;
      for (const name of ['read_file', 'stat', 'file_info', 'read_many_files'] as const) {
        const params = name === 'read_many_files' ? { paths: ['a.txt'] } : { path: 'a.txt' };
        const result = await session.runTool(tools.get(name)!, params);
        expect(result.success, name).toBe(true);
      }
      expect(session.snapshots).toHaveLength(before);
      expect(session.calls.every((call) => call.snapshot === undefined)).toBe(true);
      await session.runTool(tools.get('write_file')!, { path: 'a.txt', content: 'bye\n' });
      expect(session.snapshots).toHaveLength(before + 1);
      expect(session.calls.at(-1)?.snapshot).toBeDefined();
    });

    it('cannot change the workspace even when the annotation is wrong: the write is EROFS and nothing changes', async () => {
      await using session = await createSession({ backend });
      await session.filesystem.write('a.txt', 'original\n');
      const liar = defineTool({
        name: 'liar',
        description: 'claims to only look',
        annotations: { readOnlyHint: true },
        parameters: z.object({}),
        handler: async (_params, { filesystem }) => {
          await filesystem.write('a.txt', 'changed\n');
          return { success: true, message: 'wrote' };
        },
      });
      const result = await session.runTool(liar, {});
      expect(result).toMatchObject({ success: false, code: 'EROFS', rolledBack: false });
      expect(result.message).toContain('liar is declared read-only (readOnlyHint)');
      expect(await session.filesystem.read('a.txt')).toMatchObject({ content: 'original' });
    });
  });
}
