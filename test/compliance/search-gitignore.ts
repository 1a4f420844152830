import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { workspaces, type ComplianceHarness } from './harness.js';

async function repository(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('.gitignore', 'node_modules/\n*.log\n!keep.log\n/dist\n');
  await ws.write('src/index.ts', 'TODO root\n');
  await ws.write('src/app.log', 'TODO log\n');
  await ws.write('src/keep.log', 'TODO kept\n');
  await ws.write('src/dist/bundle.ts', 'TODO not anchored here\n');
  await ws.write('dist/bundle.ts', 'TODO anchored\n');
  await ws.write('node_modules/pkg/index.ts', 'TODO dependency\n');
  await ws.write('lib/.gitignore', 'generated/\n!*.log\n');
  await ws.write('lib/generated/out.ts', 'TODO generated\n');
  await ws.write('lib/trace.log', 'TODO re-included below\n');
  await ws.write('.git/HEAD', 'TODO ref: refs/heads/main\n');
}

/** `respectGitignore`: git's rules over the workspace's own `.gitignore` files, on every backend. */
export function searchGitignore(harness: ComplianceHarness): void {
  describe('glob and grep with respectGitignore', () => {
    const create = workspaces(harness);

    it('skip ignored files: nested files, negations, anchored patterns, directories and .git', async () => {
      const ws = await create();
      await repository(ws);
      let ignored: number | undefined;
      const paths = (await ws.glob('**', { dot: true, respectGitignore: true, onIgnored: (n) => (ignored = n) })).map((m) => m.path);
      expect(paths).toEqual(['.gitignore', 'lib/.gitignore', 'lib/trace.log', 'src/dist/bundle.ts', 'src/index.ts', 'src/keep.log']);
      expect(ignored).toBe(5);
      const grep = await ws.grep('TODO', { respectGitignore: true, onIgnored: (n) => (ignored = n) });
      expect(grep.map((m) => m.path)).toEqual(['lib/trace.log', 'src/dist/bundle.ts', 'src/index.ts', 'src/keep.log']);
      expect(ignored).toBe(4);
    });

    it('search everything by default, and take a .gitignore edit into account at once', async () => {
      const ws = await create();
      await repository(ws);
      expect(await ws.glob('**', { dot: true })).toHaveLength(11);
      expect((await ws.grep('TODO')).map((m) => m.path)).toContain('node_modules/pkg/index.ts');
      await ws.write('.gitignore', 'src/\n');
      const paths = (await ws.glob('**/*.ts', { respectGitignore: true })).map((m) => m.path);
      expect(paths).toEqual(['dist/bundle.ts', 'node_modules/pkg/index.ts']);
    });

    it('apply the rules of the directories above the search base', async () => {
      const ws = await create();
      await repository(ws);
      expect((await ws.glob('*', { path: 'src', respectGitignore: true })).map((m) => m.path)).toEqual(['src/index.ts', 'src/keep.log']);
      expect((await ws.grep('TODO', { path: 'node_modules', respectGitignore: true })).map((m) => m.path)).toEqual([]);
      expect((await ws.grep('TODO', { path: 'lib/trace.log', respectGitignore: true })).map((m) => m.path)).toEqual(['lib/trace.log']);
    });
  });
}
