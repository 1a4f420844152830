import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../cli/support.js';

const run = promisify(execFile);
const OUT = join(REPO, '.docs-check', 'examples');

/** Every examples/*.ts (type-checked by `npm run lint`, which includes examples/) runs offline and exits 0. */
describe('examples/', async () => {
  assertBuilt();
  await mkdir(OUT, { recursive: true });
  const files = (await readdir(join(REPO, 'examples'))).filter((name) => name.endsWith('.ts')).sort();

  it('has one example per adapter and an orchestrator loop', () => {
    expect(files).toEqual(expect.arrayContaining(['ai-sdk.ts', 'anthropic.ts', 'langchain.ts', 'openai.ts', 'orchestrator.ts']));
  });

  for (const name of files) {
    it(`runs examples/${name}`, async () => {
      const source = await readFile(join(REPO, 'examples', name), 'utf8');
      const js = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      const file = join(OUT, name.replace(/\.ts$/, '.mjs'));
      await writeFile(file, js);
      const cwd = await mkdtemp(join(tmpdir(), 'sessionfs-example-'));
      try {
        await run(process.execPath, [file], { cwd, timeout: 30_000 });
      } catch (error) {
        const { stderr, stdout } = error as { stderr?: string; stdout?: string };
        throw new Error(`examples/${name} failed:\n${stderr ?? ''}${stdout ?? ''}`);
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    });
  }
});
