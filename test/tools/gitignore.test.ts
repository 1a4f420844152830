import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { toolCaller } from './helpers.js';
import { disposing, SESSION_BACKENDS } from '../support/backends.js';

for (const backend of SESSION_BACKENDS) {
  describe(`glob and grep tools skip what .gitignore ignores (${backend.name})`, () => {
    const create = disposing(backend).create;
    const project = async (): Promise<SnapshotableWorkspace> => {
      const ws = create();
      await ws.write('.gitignore', 'dist/\nnode_modules/\n');
      await ws.write('src/app.ts', 'export const answer = 42;\n');
      await ws.write('dist/app.js', 'exports.answer = 42;\n');
      await ws.write('node_modules/lib/index.ts', 'export const answer = 0;\n');
      return ws;
    };

    it('grep leaves ignored files out, says how many, and searches them with include_ignored', async () => {
      const call = toolCaller(await project());
      const result = await call('grep', { pattern: 'answer' });
      expect(result.message).toBe(
        '1 match:\nsrc/app.ts:1: export const answer = 42;\n(2 files ignored by .gitignore were skipped; pass include_ignored: true to include them.)',
      );
      expect(result.value).toMatchObject({ ignored: 2 });
      const everything = await call('grep', { pattern: 'answer', include_ignored: true });
      expect((everything.value as { matches: { path: string }[] }).matches.map((m) => m.path)).toEqual([
        'dist/app.js',
        'node_modules/lib/index.ts',
        'src/app.ts',
      ]);
      expect(everything.message).not.toContain('ignored by .gitignore');
    });

    it('glob leaves ignored files out, also when nothing else matches', async () => {
      const call = toolCaller(await project());
      expect((await call('glob', { pattern: '**/*.ts' })).message).toBe(
        '1 file matches "**/*.ts":\nsrc/app.ts\n(1 file ignored by .gitignore was skipped; pass include_ignored: true to include it.)',
      );
      const none = await call('glob', { pattern: '**/*.js' });
      expect(none.message).toBe(
        'No files match "**/*.js" under /.\n(1 file ignored by .gitignore was skipped; pass include_ignored: true to include it.)',
      );
      expect((await call('glob', { pattern: '**/*.js', include_ignored: true })).value).toMatchObject({
        paths: ['dist/app.js'],
        ignored: 0,
      });
    });
  });
}
