import { execa } from 'execa';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
// DEPCRUISE_BIN lets a checkout without the dev dependency installed point at another install.
const BIN = process.env.DEPCRUISE_BIN ?? join(REPO, 'node_modules/.bin/depcruise');
const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** `npm run depcruise`, as package.json spells it, run in `cwd`. */
function depcruise(cwd: string) {
  const [command, ...args] = scripts.depcruise!.split(' ');
  expect(command).toBe('depcruise');
  return execa(BIN, args, { cwd, reject: false });
}

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tiny project under the repo's layer rules: the contract, a backend and a tool, importing downward. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sessionfs-layers-'));
  temps.push(dir);
  copyFileSync(join(REPO, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  const tsconfig = { compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const base: Record<string, string> = {
    'src/workspace/types.ts': 'export type Size = number;\n',
    'src/backends/memory/driver.ts': "import type { Size } from '../../workspace/types.js';\nexport const size: Size = 1;\n",
    'src/tools/read.ts': "import { size } from '../backends/memory/driver.js';\nexport const read = size;\n",
  };
  for (const [path, text] of Object.entries({ ...base, ...files })) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('npm run lint checks the layering (npm run depcruise)', () => {
  it('is part of npm run lint', () => {
    expect(scripts.lint).toMatch(/&& npm run depcruise$/);
  });

  it('passes on src/', async () => {
    const run = await depcruise(REPO);
    expect(run.stdout + run.stderr).not.toMatch(/error/);
    expect(run.exitCode).toBe(0);
  }, 120_000);

  it('passes on a tiny project whose imports point down', async () => {
    const run = await depcruise(project({}));
    expect(run.stdout + run.stderr).not.toMatch(/error/);
    expect(run.exitCode).toBe(0);
  }, 120_000);

  it.each<{ rule: string; files: Record<string, string> }>([
    {
      rule: 'no-circular',
      files: {
        'src/session/a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
        'src/session/b.ts': "import { a } from './a.js';\nexport const b = (): number => a() - 1;\n",
      },
    },
    {
      rule: 'no-upward-from-tools',
      files: {
        'src/shell/bash.ts': 'export const bash = 1;\n',
        'src/tools/suite.ts': "import { bash } from '../shell/bash.js';\nexport const suite = bash;\n",
      },
    },
    {
      rule: 'no-upward-from-contract',
      files: {
        'src/workspace/create-workspace.ts': 'export type Workspace = { size: number };\n',
        'src/workspace/types.ts': "import type { Workspace } from './create-workspace.js';\nexport type Size = Workspace['size'];\n",
      },
    },
    {
      rule: 'no-cross-backend',
      files: {
        'src/backends/host/sandbox.ts': 'export const sandbox = 1;\n',
        'src/backends/overlay/lower.ts': "import { sandbox } from '../host/sandbox.js';\nexport const lower = sandbox;\n",
      },
    },
    {
      rule: 'no-upward-from-host-files',
      files: { 'src/host-files/walk.ts': "import { size } from '../backends/memory/driver.js';\nexport const walk = size;\n" },
    },
  ])(
    'fails on a planted $rule',
    async ({ rule, files }) => {
      const run = await depcruise(project(files));
      expect(run.stdout).toContain(`error ${rule}:`);
      expect(run.exitCode).not.toBe(0);
    },
    120_000,
  );
});
