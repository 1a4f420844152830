import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { hydrate, type HydrateResult } from '../../src/sources/index.js';
import { contentsOf, tempDirs } from '../../src/testing/harness.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { gitignoreTree, gitListed, writeGitTree } from '../support/gitignore-trees.js';

const git = spawnSync('git', ['--version']);
const tempDir = tempDirs({ prefix: 'sessionfs-hydrate-gitignore-' });
const IGNORED = /^ignored by \.gitignore/;

/** Writes `files` (path → text) under `root`. */
function tree(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

async function hydrated(hostPath: string, allowed: string, extra: { gitignore?: boolean } = {}) {
  const workspace = createWorkspace(memoryDriver());
  const result = await hydrate(workspace, [{ hostPath, path: '/', ...extra }], { allowedHostRoots: [allowed] });
  const files = Object.keys(await contentsOf(workspace))
    .filter((path) => !path.endsWith('/'))
    .sort();
  await workspace.dispose();
  return { files, result };
}

const ignoredPaths = (result: HydrateResult): string[] => result.skipped.filter((s) => IGNORED.test(s.reason)).map((s) => s.path);

describe.skipIf(git.status !== 0)('hydration leaves out what git ignores', () => {
  it('copies what `git ls-files --others --cached --exclude-standard` lists; each ignored directory is one skipped entry', async () => {
    await fc.assert(
      fc.asyncProperty(gitignoreTree, async ({ files, gitignores }) => {
        const repo = join(tempDir(), 'repo');
        const contents = writeGitTree(repo, { files, gitignores });
        const { files: copied, result } = await hydrated(repo, repo);
        expect(copied).toEqual(gitListed(repo));
        // Every file left out is covered by exactly one ignored entry (itself or a directory above it), and no
        // ignored entry lies below another.
        const ignored = ignoredPaths(result);
        const covers = (entry: string, path: string) => path === entry || path.startsWith(`${entry}/`);
        for (const path of contents.keys()) {
          const covering = ignored.filter((entry) => covers(entry, path));
          expect(covering.length).toBe(copied.includes(path) ? 0 : 1);
        }
        for (const entry of ignored) expect(ignored.filter((other) => other !== entry && covers(other, entry))).toEqual([]);
      }),
      { numRuns: Number(process.env.SESSIONFS_GITIGNORE_RUNS ?? 30) },
    );
  });

  it("a folder inside a working tree honours the tree's outer .gitignore files, as git run there does", async () => {
    await fc.assert(
      fc.asyncProperty(gitignoreTree, async ({ files, gitignores }) => {
        const root = tempDir();
        const repo = join(root, 'repo');
        writeGitTree(repo, { files, gitignores });
        const folder = join(repo, 'a');
        const isDirectory = files.some((file) => file.startsWith('a/'));
        // A folder the outer rules ignore was mounted on purpose: only its own rules count (checked below).
        if (!isDirectory || spawnSync('git', ['check-ignore', '-q', 'a/'], { cwd: repo }).status === 0) return;
        const { files: copied } = await hydrated(folder, root);
        expect(copied).toEqual(gitListed(folder));
      }),
      { numRuns: Number(process.env.SESSIONFS_GITIGNORE_RUNS ?? 30) },
    );
  });

  it('skips node_modules as one entry and .git as a version-control directory; gitignore: false copies them', async () => {
    const repo = tempDir();
    tree(repo, {
      '.gitignore': 'node_modules/\n*.log\n!keep.log\n',
      'src/index.js': 'main\n',
      'node_modules/p/index.js': 'dep\n',
      'node_modules/p/package.json': '{}\n',
      'debug.log': 'noise\n',
      'keep.log': 'kept\n',
    });
    expect(spawnSync('git', ['init', '-q', repo]).status).toBe(0);
    const { files, result } = await hydrated(repo, repo);
    expect(files).toEqual(['.gitignore', 'keep.log', 'src/index.js']);
    expect(ignoredPaths(result)).toEqual(['debug.log', 'node_modules']);
    expect(result.skipped.find((s) => s.path === '.git')?.reason).toMatch(/version-control directory/);

    const all = await hydrated(repo, repo, { gitignore: false });
    expect(all.files).toEqual([
      '.gitignore',
      'debug.log',
      'keep.log',
      'node_modules/p/index.js',
      'node_modules/p/package.json',
      'src/index.js',
    ]);
    expect(ignoredPaths(all.result)).toEqual([]);
  });

  it('outer rules count only up to the top of the working tree, and only inside the allowed roots', async () => {
    const root = tempDir();
    tree(root, {
      'repo/.gitignore': 'dist/\n',
      'repo/packages/web/dist/out.js': 'built\n',
      'repo/packages/web/src/a.js': 'a\n',
    });
    expect(spawnSync('git', ['init', '-q', join(root, 'repo')]).status).toBe(0);
    const web = join(root, 'repo/packages/web');
    expect((await hydrated(web, root)).files).toEqual(['src/a.js']);
    // The working tree's top lies outside the allowed roots: its .gitignore is not read.
    expect((await hydrated(web, join(root, 'repo/packages'))).files).toEqual(['dist/out.js', 'src/a.js']);
    // Not a working tree (no .git above): a parent's .gitignore means nothing, as to git.
    const plain = tempDir();
    tree(plain, { '.gitignore': 'dist/\n', 'web/dist/out.js': 'built\n' });
    expect((await hydrated(join(plain, 'web'), plain)).files).toEqual(['dist/out.js']);
    // A folder the outer rules ignore, mounted on purpose, comes whole (its own rules still apply).
    tree(root, { 'repo/packages/web/dist/.gitignore': '*.map\n', 'repo/packages/web/dist/out.js.map': '{}\n' });
    const dist = await hydrated(join(web, 'dist'), root);
    expect(dist.files).toEqual(['.gitignore', 'out.js']);
    expect(ignoredPaths(dist.result)).toEqual(['out.js.map']);
  });
});
