import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';

/** Paths and `.gitignore` lines that exercise git's rules: directories, anchors, `**`, negations, case, escapes. */
export const FILE_PATHS = [
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
export const GITIGNORE_DIRS = ['', 'a', 'src', 'a/b', 'build'];
export const LINES = [
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

/** A few files and up to three `.gitignore` files, each a few of LINES. */
export const gitignoreTree = fc.record({
  files: fc.uniqueArray(fc.constantFrom(...FILE_PATHS), { minLength: 1, maxLength: FILE_PATHS.length }),
  gitignores: fc.uniqueArray(fc.tuple(fc.constantFrom(...GITIGNORE_DIRS), fc.array(fc.constantFrom(...LINES), { maxLength: 6 })), {
    selector: ([dir]) => dir,
    maxLength: 3,
  }),
});

/** Writes the tree into a new git repository at `repo`; returns its files (path → text), `.gitignore` files included. */
export function writeGitTree(
  repo: string,
  { files, gitignores }: { files: string[]; gitignores: [string, string[]][] },
): Map<string, string> {
  const contents = new Map<string, string>(files.map((path) => [path, `${path}\n`]));
  for (const [dir, lines] of gitignores) {
    // A .gitignore can only live in a directory; skip one whose place a file already holds.
    if (files.some((file) => dir !== '' && (file === dir || dir.startsWith(`${file}/`)))) continue;
    contents.set(dir === '' ? '.gitignore' : `${dir}/.gitignore`, `${lines.join('\n')}\n`);
  }
  for (const [path, text] of contents) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  expect(spawnSync('git', ['init', '-q', repo]).status).toBe(0);
  return contents;
}

/** What git lists in `cwd` (tracked or not, less what it ignores), sorted; paths relative to `cwd`. */
export function gitListed(cwd: string): string[] {
  const listed = spawnSync('git', ['-c', 'core.ignorecase=false', 'ls-files', '-z', '--others', '--cached', '--exclude-standard'], {
    cwd,
    encoding: 'utf8',
  });
  expect(listed.status).toBe(0);
  const paths = listed.stdout.split('\0').filter((path) => path !== '');
  return paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
