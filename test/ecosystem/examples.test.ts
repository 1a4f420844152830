import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../cli/support.js';
import { runSnippet } from './run-snippet.js';

const OUT = join(REPO, '.docs-check', 'examples');

/** Every examples/*.ts (type-checked by `npm run lint`, which includes examples/) runs offline and exits 0. */
describe('examples/', async () => {
  assertBuilt();
  await mkdir(OUT, { recursive: true });
  const files = (await readdir(join(REPO, 'examples'))).filter((name) => name.endsWith('.ts')).sort();

  it('has one example per adapter, an orchestrator loop and a whole multi-turn agent loop', () => {
    expect(files).toEqual(
      expect.arrayContaining(['ai-sdk.ts', 'anthropic.ts', 'langchain.ts', 'openai.ts', 'orchestrator.ts', 'agent-loop.ts']),
    );
  });

  it('runs with the documented command: npm run example -- agent-loop (tsx, on Node 20)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/example.mjs', 'agent-loop'], { cwd: REPO, timeout: 60_000 });
    expect(stdout).toContain('edit_file: failed, rolled back');
    expect(stdout).toContain('model: greet() now says "Hi".');
  });

  for (const name of files) {
    it(`runs examples/${name}`, async () => {
      const source = await readFile(join(REPO, 'examples', name), 'utf8');
      await runSnippet(`examples/${name}`, source, join(OUT, name.replace(/\.ts$/, '.mjs')));
    });
  }
});
