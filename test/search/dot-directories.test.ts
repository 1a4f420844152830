import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import type { Progress } from '../../src/workspace/progress.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { tempDirs } from '../../src/testing/harness.js';

/** A project with dot directories (a `.git` with many entries, `.github`, one nested), searched by glob and grep. */
const FILES = [
  'src/a.ts',
  'src/.hidden/b.ts',
  'src/.hidden/deep/c.ts',
  '.github/workflows/ci.yml',
  '.github/x.ts',
  '.git/objects/ab/cd.ts',
  '.git/config',
  'docs/.eslintrc',
  'README.md',
];

const tempDir = tempDirs({ prefix: 'sessionfs-dot-dirs-', until: 'file' });

async function backends(): Promise<[string, SnapshotableWorkspace][]> {
  const root = tempDir();
  const host = createWorkspace(hostDriver({ root }));
  const memory = createWorkspace(memoryDriver());
  for (const path of FILES) {
    await host.write(path, `TOKEN in ${path}\n`);
    await memory.write(path, `TOKEN in ${path}\n`);
  }
  return [
    ['host', host],
    ['memory', memory],
  ];
}

const sorted = (paths: string[]): string[] => [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('dot directories: what a search may skip, and what it finds', () => {
  const globs: [string, boolean][] = [
    ['**/*.ts', false],
    ['**/*.ts', true],
    ['**', false],
    ['**', true],
    ['**/.github/**/*.yml', false],
    ['.github/*.ts', false],
    ['**/.hidden/**', false],
    ['src/**/*.ts', false],
    ['**/{.git,src}/**/*.ts', false],
    ['**/.eslintrc', false],
    ['*/?hidden/*.ts', false],
  ];

  it.each(globs)('glob %s (dot: %s) finds what picomatch matches, on host and memory', async (pattern, dot) => {
    const isMatch = picomatch(pattern, { dot });
    const expected = sorted(FILES.filter((path) => isMatch(path)));
    for (const [name, ws] of await backends()) {
      expect(
        (await ws.glob(pattern, { dot })).map((m) => m.path),
        name,
      ).toEqual(expected);
      await ws.dispose();
    }
  });

  it('grep without a glob searches no dot directory, and with a glob what the glob matches', async () => {
    for (const [name, ws] of await backends()) {
      expect(
        (await ws.grep('TOKEN')).map((m) => m.path),
        name,
      ).toEqual(['README.md', 'src/a.ts']);
      expect(
        (await ws.grep('TOKEN', { glob: '.github/**' })).map((m) => m.path),
        name,
      ).toEqual(['.github/workflows/ci.yml', '.github/x.ts']);
      expect(
        (await ws.grep('TOKEN', { path: '.github' })).map((m) => m.path),
        name,
      ).toEqual(['.github/workflows/ci.yml', '.github/x.ts']);
      await ws.dispose();
    }
  });

  it('the host walk does not list a dot directory nothing in which can match (progress never reaches it)', async () => {
    const [hostBackend, memoryBackend] = await backends();
    await memoryBackend?.[1].dispose();
    const host = hostBackend?.[1] as SnapshotableWorkspace;
    const walked = async (run: (onProgress: (progress: Progress) => void) => Promise<unknown>): Promise<string[]> => {
      const paths: string[] = [];
      await run((progress) => {
        if (progress.path !== undefined) paths.push(progress.path);
      });
      return paths;
    };
    const inside = (paths: string[]): string[] => paths.filter((path) => /(^|\/)\.[^/]+\//.test(path));
    expect(inside(await walked((onProgress) => host.glob('**/*.ts', { onProgress })))).toEqual([]);
    expect(inside(await walked((onProgress) => host.grep('TOKEN', { onProgress })))).toEqual([]);
    // A glob that names a dot directory, or asks for dot files, lists them.
    expect(inside(await walked((onProgress) => host.glob('**/.github/**/*.yml', { onProgress })))).toContain('.github/workflows/ci.yml');
    expect(inside(await walked((onProgress) => host.glob('**/*.ts', { dot: true, onProgress })))).toContain('.git/objects/ab/cd.ts');
    await host.dispose();
  });
});
