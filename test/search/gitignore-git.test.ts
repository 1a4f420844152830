import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { tempDirs } from '../../src/testing/harness.js';

/** Paths and `.gitignore` lines that exercise git's rules: directories, anchors, `**`, negations, case, escapes. */
const FILE_PATHS = [
  'x.js',
  'X.js',
  'a/x.js',
  'a/y.log',
  'a/keep.log',
  'a/b/x.js',
  'a/b/tmp/z.txt',
  'build/out.js',
  'src/build/out.js',
  'src/a/y.log',
  'node_modules/p/index.js',
  'src/node_modules/q.js',
  'README.md',
  'docs/README.md',
  '#hash.txt',
  'tmp/t.txt',
];
const GITIGNORE_DIRS = ['', 'a', 'src', 'a/b', 'build'];
const LINES = [
  'node_modules/',
  '*.log',
  '!keep.log',
  '/build',
  'build/',
  'a/*.js',
  '**/tmp',
  'b',
  '/x.js',
  '!a/',
  'src/**/y.log',
  '# comment',
  '',
  '\\#hash.txt',
  'a/b/',
  '*.md',
  '!README.md',
  'x.*',
  '!/a/b/x.js',
  'tmp/',
  '*',
  '!*/',
  '!*.js',
];

const tree = fc.record({
  files: fc.uniqueArray(fc.constantFrom(...FILE_PATHS), { minLength: 1, maxLength: FILE_PATHS.length }),
  gitignores: fc.uniqueArray(fc.tuple(fc.constantFrom(...GITIGNORE_DIRS), fc.array(fc.constantFrom(...LINES), { maxLength: 6 })), {
    selector: ([dir]) => dir,
    maxLength: 3,
  }),
});

const git = spawnSync('git', ['--version']);
const tempDir = tempDirs({ prefix: 'sessionfs-gitignore-' });

describe.skipIf(git.status !== 0)('respectGitignore agrees with real git', () => {
  if (git.status !== 0) console.log('skipped: git is not on PATH');

  it('glob("**", { dot, respectGitignore }) lists what `git ls-files --others --cached --exclude-standard` lists', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async ({ files, gitignores }) => {
        const root = tempDir();
        const repo = join(root, 'repo');
        const contents = new Map<string, string>(files.map((path) => [path, `${path}\n`]));
        for (const [dir, lines] of gitignores) {
          // A .gitignore can only live in a directory; skip one whose place a file already holds.
          if (files.some((file) => dir !== '' && (file === dir || dir.startsWith(`${file}/`)))) continue;
          contents.set(dir === '' ? '.gitignore' : `${dir}/.gitignore`, `${lines.join('\n')}\n`);
        }
        for (const [path, text] of contents) {
          fs.mkdirSync(dirname(join(repo, path)), { recursive: true });
          fs.writeFileSync(join(repo, path), text);
        }
        const init = spawnSync('git', ['init', '-q', repo]);
        expect(init.status).toBe(0);
        const listed = spawnSync('git', ['-c', 'core.ignorecase=false', 'ls-files', '-z', '--others', '--cached', '--exclude-standard'], {
          cwd: repo,
          encoding: 'utf8',
        });
        expect(listed.status).toBe(0);
        const expected = listed.stdout.split('\0').filter((path) => path !== '');
        expected.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

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
