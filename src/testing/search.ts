import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { expectError, workspaces, type ComplianceHarness } from './harness.js';

async function project(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('a.ts', 'export const a = 1;\n');
  await ws.write('README.md', '# Title\nTODO: write docs\n');
  await ws.write('src/index.ts', 'import { a } from "../a";\n// TODO: more\nexport default a;\n');
  await ws.write('src/lib/util.ts', 'export function todo() {\n  return "TODO TODO";\n}\n');
  await ws.write('src/lib/util.test.ts', 'test("todo")\n');
  await ws.write('.github/workflows/ci.yml', 'name: TODO\n');
  await ws.write('src/.hidden.ts', '// TODO hidden\n');
  await ws.mkdir('empty/dir');
}

export function listingAndSearch(harness: ComplianceHarness): void {
  describe('list', () => {
    const create = workspaces(harness);

    it('lists immediate children sorted by name, with kinds and root-relative paths', async () => {
      const ws = await create();
      await project(ws);
      expect(await ws.list('/')).toEqual([
        { name: '.github', path: '.github', isFile: false, isDirectory: true, isSymlink: false },
        { name: 'README.md', path: 'README.md', isFile: true, isDirectory: false, isSymlink: false },
        { name: 'a.ts', path: 'a.ts', isFile: true, isDirectory: false, isSymlink: false },
        { name: 'empty', path: 'empty', isFile: false, isDirectory: true, isSymlink: false },
        { name: 'src', path: 'src', isFile: false, isDirectory: true, isSymlink: false },
      ]);
      expect((await ws.list('src')).map((e) => e.path)).toEqual(['src/.hidden.ts', 'src/index.ts', 'src/lib']);
      expect(await ws.list('empty/dir')).toEqual([]);
      expect((await ws.list()).length).toBe(5);
    });

    it('raises ENOENT for a missing directory and ENOTDIR for a file', async () => {
      const ws = await create();
      await ws.write('f.txt', 'x');
      await expectError(ws.list('missing'), 'FileNotFoundError', 'ENOENT');
      await expectError(ws.list('f.txt'), 'NotADirectoryError', 'ENOTDIR');
    });
  });

  describe('glob', () => {
    const create = workspaces(harness);

    it('matches with picomatch semantics: **/*.ts includes root-level files; * does not cross /', async () => {
      const ws = await create();
      await project(ws);
      expect((await ws.glob('**/*.ts')).map((m) => m.path)).toEqual(['a.ts', 'src/index.ts', 'src/lib/util.test.ts', 'src/lib/util.ts']);
      expect((await ws.glob('*.ts')).map((m) => m.path)).toEqual(['a.ts']);
      expect((await ws.glob('src/*')).map((m) => m.path)).toEqual(['src/index.ts']);
      expect((await ws.glob('**/*.{md,yml}')).map((m) => m.path)).toEqual(['README.md']);
      expect((await ws.glob('src/lib/util.[tj]s')).map((m) => m.path)).toEqual(['src/lib/util.ts']);
      expect((await ws.glob('src/**/*.test.ts')).map((m) => m.path)).toEqual(['src/lib/util.test.ts']);
    });

    it('returns files only, as { path, isFile: true }', async () => {
      const ws = await create();
      await project(ws);
      const all = await ws.glob('**');
      expect(all.every((m) => m.isFile === true)).toBe(true);
      expect(all.map((m) => m.path)).not.toContain('empty/dir');
      expect(all.map((m) => m.path)).not.toContain('src');
      expect(all[0]).toEqual({ path: 'README.md', isFile: true });
    });

    it('matches dot segments only with dot: true or an explicit dot in the pattern', async () => {
      const ws = await create();
      await project(ws);
      expect((await ws.glob('**/*.yml')).map((m) => m.path)).toEqual([]);
      expect((await ws.glob('**/*.yml', { dot: true })).map((m) => m.path)).toEqual(['.github/workflows/ci.yml']);
      expect((await ws.glob('.github/**/*.yml')).map((m) => m.path)).toEqual(['.github/workflows/ci.yml']);
      expect((await ws.glob('src/.*.ts')).map((m) => m.path)).toEqual(['src/.hidden.ts']);
      expect((await ws.glob('src/**', { dot: true })).map((m) => m.path)).toContain('src/.hidden.ts');
    });

    it('takes the pattern relative to path and reports paths relative to the root', async () => {
      const ws = await create();
      await project(ws);
      expect((await ws.glob('*.ts', { path: 'src/lib' })).map((m) => m.path)).toEqual(['src/lib/util.test.ts', 'src/lib/util.ts']);
      expect((await ws.glob('**/*.ts', { path: '/src' })).map((m) => m.path)).toEqual([
        'src/index.ts',
        'src/lib/util.test.ts',
        'src/lib/util.ts',
      ]);
      expect((await ws.glob('lib/util.ts', { path: 'src' })).map((m) => m.path)).toEqual(['src/lib/util.ts']);
    });

    it('returns [] for a missing base and matches literal file paths', async () => {
      const ws = await create();
      await project(ws);
      expect(await ws.glob('**/*', { path: 'nowhere' })).toEqual([]);
      expect(await ws.glob('nothing/*.ts')).toEqual([]);
      expect(await ws.glob('src/index.ts')).toEqual([{ path: 'src/index.ts', isFile: true }]);
    });

    it('rejects an empty pattern', async () => {
      const ws = await create();
      await expectError(ws.glob(''), 'InvalidArgumentError', 'EINVAL');
    });
  });

  describe('grep', () => {
    const create = workspaces(harness);

    it('returns the first match of each matching line, sorted by path and line', async () => {
      const ws = await create();
      await project(ws);
      const matches = await ws.grep('TODO');
      expect(matches.map((m) => `${m.path}:${m.lineNumber}`)).toEqual(['README.md:2', 'src/index.ts:2', 'src/lib/util.ts:2']);
      expect(matches[2]).toEqual({
        path: 'src/lib/util.ts',
        lineNumber: 2,
        lineContent: '  return "TODO TODO";',
        matchStart: 10,
        matchEnd: 14,
      });
    });

    it('skips dot files unless the glob asks for them, as ripgrep does', async () => {
      const ws = await create();
      await project(ws);
      expect((await ws.grep('TODO', { glob: '**/*.yml' })).map((m) => m.path)).toEqual([]);
      expect((await ws.grep('TODO', { glob: '.github/**' })).map((m) => m.path)).toEqual(['.github/workflows/ci.yml']);
    });

    it('compiles a JavaScript regex with the u flag, plus i for ignoreCase', async () => {
      const ws = await create();
      await ws.write('u.txt', 'naïve café\nplain\n');
      expect((await ws.grep('\\p{L}+é')).map((m) => m.lineContent)).toEqual(['naïve café']);
      const insensitive = await ws.grep('todo', { ignoreCase: true, path: '/' });
      expect(insensitive).toEqual([]);
      await ws.write('t.txt', 'ToDo here\n');
      expect(await ws.grep('todo', { ignoreCase: true })).toEqual([
        { path: 't.txt', lineNumber: 1, lineContent: 'ToDo here', matchStart: 0, matchEnd: 4 },
      ]);
      expect(await ws.grep('todo')).toEqual([]);
      const astral = await ws.grep('🚀', {});
      expect(astral).toEqual([]);
      await ws.write('r.txt', 'go 🚀 now\n');
      expect(await ws.grep('🚀')).toEqual([{ path: 'r.txt', lineNumber: 1, lineContent: 'go 🚀 now', matchStart: 3, matchEnd: 5 }]);
    });

    it('raises InvalidArgumentError for an invalid regex (including ones only the u flag forbids)', async () => {
      const ws = await create();
      await ws.write('a.txt', 'x');
      await expectError(ws.grep('('), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.grep('\\-'), 'InvalidArgumentError', 'EINVAL');
    });

    it('strips \\n and a trailing \\r from lineContent', async () => {
      const ws = await create();
      await ws.write('crlf.txt', 'first\r\nmatch me\r\nlast');
      expect(await ws.grep('match')).toEqual([{ path: 'crlf.txt', lineNumber: 2, lineContent: 'match me', matchStart: 0, matchEnd: 5 }]);
      expect(await ws.grep('me$')).toHaveLength(1);
    });

    it('filters files with a glob relative to path', async () => {
      const ws = await create();
      await project(ws);
      expect((await ws.grep('TODO', { path: 'src', glob: '*.ts' })).map((m) => m.path)).toEqual(['src/index.ts']);
      expect((await ws.grep('TODO', { path: 'src', glob: '**/*.ts' })).map((m) => m.path)).toEqual(['src/index.ts', 'src/lib/util.ts']);
      expect((await ws.grep('TODO', { glob: '*.md' })).map((m) => m.path)).toEqual(['README.md']);
    });

    it('truncates silently at maxMatches, returns none for 0, and rejects a negative value', async () => {
      const ws = await create();
      await ws.write('many.txt', Array.from({ length: 50 }, () => 'hit').join('\n'));
      expect(await ws.grep('hit', { maxMatches: 7 })).toHaveLength(7);
      expect((await ws.grep('hit', { maxMatches: 7 })).at(-1)?.lineNumber).toBe(7);
      expect(await ws.grep('hit', { maxMatches: 0 })).toEqual([]);
      expect(await ws.grep('hit')).toHaveLength(50);
      await expectError(ws.grep('hit', { maxMatches: -1 }), 'InvalidArgumentError', 'EINVAL');
    });

    it('returns [] for a missing path, searches a single file path, and skips binary files', async () => {
      const ws = await create();
      await project(ws);
      await ws.writeBytes('bin/data.bin', new Uint8Array([0x54, 0x4f, 0x44, 0x4f, 0x00, 0xff, 0xfe]));
      expect(await ws.grep('TODO', { path: 'missing' })).toEqual([]);
      expect((await ws.grep('TODO', { path: 'README.md' })).map((m) => m.path)).toEqual(['README.md']);
      expect((await ws.grep('TODO', { path: '.github/workflows/ci.yml' })).map((m) => m.path)).toEqual(['.github/workflows/ci.yml']);
      expect((await ws.grep('TODO', { path: '.github' })).map((m) => m.path)).toEqual(['.github/workflows/ci.yml']);
      expect((await ws.grep('TODO')).map((m) => m.path)).not.toContain('bin/data.bin');
    });
  });
}
