import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { globNameFilter, skipsDotDirectories } from '../../src/workspace/search/patterns.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

/** Names that exercise picomatch's corners: dots, brackets and braces taken literally, two-byte characters. */
const segment = fc.constantFrom(
  'a',
  'b.ts',
  'package.json',
  'xpackage.json',
  'b',
  'c.md',
  '.hidden',
  '[a].txt',
  '{x}.js',
  'é.ts',
  'a.b.c',
  'README',
  '!n.ts',
  'x+y',
);
const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
const globPiece = fc.constantFrom(
  '**',
  '*',
  '*.ts',
  'a',
  '?',
  '[ab]*',
  '{a,b.ts}',
  '.*',
  '*.{ts,md}',
  '[a].txt',
  '!(*.md)',
  'é*',
  '@(a|c.md)',
  'README',
  'x+y',
  'b*',
  'a.b*',
  '*b.ts',
  'a?b.c',
  'package.json',
);
const glob = fc.array(globPiece, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));

describe('glob equals picomatch on the same relative paths (matching runs in the worker pool)', () => {
  it('matches a glob’s own text as a literal path first, as picomatch does', async () => {
    const ws = createWorkspace(memoryDriver());
    try {
      await ws.write('[a].txt', 'x');
      await ws.write('a.txt', 'x');
      await ws.write('*(a)', 'x');
      await ws.write('a', 'x');
      expect((await ws.glob('[a].txt')).map((m) => m.path)).toEqual(['[a].txt', 'a.txt']);
      // picomatch's regex for the extglob does not match its own text; its matcher does, and so does glob.
      expect((await ws.glob('*(a)')).map((m) => m.path)).toEqual(['*(a)', 'a']);
    } finally {
      await ws.dispose();
    }
  });

  it('on generated trees and patterns, with and without dot', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(path, { minLength: 1, maxLength: 8 }), glob, fc.boolean(), async (paths, pattern, dot) => {
        // A path that is a prefix directory of another cannot also be a file.
        const files = paths.filter((p) => !paths.some((other) => other.startsWith(`${p}/`)));
        const ws = createWorkspace(memoryDriver());
        try {
          for (const file of files) await ws.write(file, 'x');
          const isMatch = picomatch(pattern, { dot });
          const expected = files.filter((file) => isMatch(file)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          expect((await ws.glob(pattern, { dot })).map((m) => m.path)).toEqual(expected);
        } finally {
          await ws.dispose();
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** Globs of any characters (picomatch's syntax included) and paths of awkward names, for the cheap tests below. */
const anyGlob = fc
  .array(
    fc.constantFrom(
      ...['a', 'b', '.', '-', '_', '*', '?', '+', '@', '!', '$', '^', '|', 'é', ' ', '/', '(', ')', '[', ']', '{', '}', ','],
      ...['\\', '#', '~', '%', '&', '=', ':', ';', "'", '"', '`', '<', '>', '**/', '.g'],
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((chars) => chars.join(''));
const anyPath = fc
  .array(fc.constantFrom('a', 'b', '.a', 'a.b', 'a-b', 'ab.', 'é', 'a b', 'a+b', 'a|b', '$a', 'a^', 'a!b', '.', '.g', '.git'), {
    minLength: 1,
    maxLength: 4,
  })
  .map((names) => names.join('/'));

describe('the name test that spares the worker the paths a glob cannot match', () => {
  it('passes over `**/*.ts` and `**/package.json` only names that may match', () => {
    const ts = globNameFilter('**/*.ts');
    expect(['a/b.ts', 'x.ts', 'a.ts/b'].map((p) => ts?.(p))).toEqual([true, true, false]);
    const pkg = globNameFilter('**/package.json');
    expect(['a/package.json', 'package.json', 'a/package.json5', 'package.json/x'].map((p) => pkg?.(p))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    // Syntax that could make the last segment span or skip a name: no test, every path goes to the worker.
    for (const glob of ['**', 'src/', '!(*.md)', '{a,b}.ts', 'a/[b].ts', 'a\\*.ts', '**/a**b', '!a.ts', '**/*'])
      expect(globNameFilter(glob), glob).toBeUndefined();
  });

  it('never turns away a path picomatch matches (generated globs and names, with and without dot)', () => {
    fc.assert(
      fc.property(anyGlob, anyPath, fc.boolean(), (glob, path, dot) => {
        const test = globNameFilter(glob);
        if (test !== undefined && !test(path)) expect(picomatch(glob, { dot })(path), `${glob} ${path}`).toBe(false);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('dot directories a search does not list', () => {
  it('are skipped only when nothing below one can match (generated globs and paths, with and without dot)', () => {
    expect(skipsDotDirectories(undefined, false)).toBe(true); // grep without a glob
    expect([skipsDotDirectories('**/*.ts', false), skipsDotDirectories('**/*.ts', true)]).toEqual([true, false]);
    for (const glob of ['.github/**', '**/.git/*', '{.git,src}/**', '[.]git/**', '@(.git)/*', '!src/**', 'a|.b/c'])
      expect(skipsDotDirectories(glob, false), glob).toBe(false);
    fc.assert(
      fc.property(anyGlob, anyPath, fc.boolean(), (glob, path, dot) => {
        const directories = path.split('/').slice(0, -1);
        if (skipsDotDirectories(glob, dot) && directories.some((name) => name.startsWith('.')))
          expect(picomatch(glob, { dot })(path), `${glob} ${path}`).toBe(false);
      }),
      { numRuns: 20_000 },
    );
  });
});
