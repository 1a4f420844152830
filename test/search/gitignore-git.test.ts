import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { tempDirs } from '../../src/testing/harness.js';
import { gitignoreTree, gitListed, writeGitTree } from '../support/gitignore-trees.js';

const git = spawnSync('git', ['--version']);
const tempDir = tempDirs({ prefix: 'sessionfs-gitignore-' });

describe.skipIf(git.status !== 0)('respectGitignore agrees with real git', () => {
  if (git.status !== 0) console.log('skipped: git is not on PATH');

  it('glob("**", { dot, respectGitignore }) lists what `git ls-files --others --cached --exclude-standard` lists', async () => {
    await fc.assert(
      fc.asyncProperty(gitignoreTree, async ({ files, gitignores }) => {
        const root = tempDir();
        const repo = join(root, 'repo');
        const contents = writeGitTree(repo, { files, gitignores });
        const expected = gitListed(repo);

        // The host workspace sees the repository's own .git directory, which must be skipped too.
        const host = createWorkspace(hostDriver({ root: repo, gitDir: join(root, 'snapshots') }));
        const memory = createWorkspace(memoryDriver());
        try {
          for (const [path, text] of contents) await memory.write(path, text);
          for (const ws of [host, memory]) {
            let ignored = -1;
            const found = await ws.glob('**', { dot: true, respectGitignore: true, onIgnored: (count) => (ignored = count) });
            expect(found.map((match) => match.path)).toEqual(expected);
            expect(ignored).toBe((await ws.glob('**', { dot: true })).length - expected.length);
          }
        } finally {
          await host.dispose();
          await memory.dispose();
        }
      }),
      {
        numRuns: Number(process.env.SESSIONFS_GITIGNORE_RUNS ?? 40),
        // Found by this property: a deeper .gitignore re-includes a directory a shallower one excludes.
        examples: [
          [{ files: ['a/b/tmp/z.txt'], gitignores: [['a', ['!*/']] as [string, string[]], ['', ['tmp/']] as [string, string[]]] }],
        ],
      },
    );
  });
});
