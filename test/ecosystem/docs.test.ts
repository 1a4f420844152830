import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../cli/support.js';
import { runSnippet } from './run-snippet.js';

/**
 * Every ```ts block in README.md and docs/*.md (files found at run time, so new docs are checked without
 * registering them) is type-checked under the project's strict options, with `sessionfs` resolving to this
 * package's build (its own `exports`), in ONE program; each block but ```ts check-only is then run by
 * Node in a fresh temporary directory.
 */
interface Block {
  source: string; // e.g. docs/backends.md:42
  code: string;
  run: boolean;
  file: string; // the .ts file it is written to
}

const BLOCK = /^```ts( check-only)?[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
const OUT = join(REPO, '.docs-check');

async function collectBlocks(): Promise<Block[]> {
  const docs = (await readdir(join(REPO, 'docs')).catch(() => [] as string[])).filter((name) => name.endsWith('.md')).sort();
  const files = ['README.md', ...docs.map((name) => `docs/${name}`)];
  const blocks: Block[] = [];
  for (const name of files) {
    const text = await readFile(join(REPO, name), 'utf8');
    for (const match of text.matchAll(BLOCK)) {
      const line = text.slice(0, match.index).split('\n').length + 1;
      const id = `${name.replace(/[^A-Za-z0-9]+/g, '-')}-${line}`;
      blocks.push({ source: `${name}:${line}`, code: match[2]!, run: match[1] === undefined, file: join(OUT, `${id}.ts`) });
    }
  }
  return blocks;
}

function typeCheck(blocks: Block[]): string[] {
  const config = ts.readConfigFile(join(REPO, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO);
  const program = ts.createProgram(
    blocks.map((b) => b.file),
    { ...parsed.options, noEmit: true, declaration: false, sourceMap: false, rootDir: OUT, noUnusedLocals: false },
  );
  const bySource = new Map(blocks.map((b) => [b.file, b.source]));
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file === undefined ? '' : `${bySource.get(d.file.fileName) ?? relative(REPO, d.file.fileName)}`;
    const line = d.file !== undefined && d.start !== undefined ? ` (block line ${d.file.getLineAndCharacterOfPosition(d.start).line})` : '';
    return `${where}${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('code blocks in README.md and docs/', async () => {
  assertBuilt();
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const blocks = await collectBlocks();
  // `export {}` makes every block a module, so top-level await and `await using` type-check.
  for (const block of blocks) await writeFile(block.file, `${block.code}\nexport {};\n`);

  it('finds the blocks (README and docs both have some)', () => {
    expect(blocks.some((b) => b.source.startsWith('README.md'))).toBe(true);
    expect(blocks.some((b) => b.source.startsWith('docs/'))).toBe(true);
  });

  it('type-checks every block under strict, in one program', () => {
    expect(typeCheck(blocks)).toEqual([]);
  });

  for (const block of blocks.filter((b) => b.run)) {
    it(`runs ${block.source}`, () => runSnippet(block.source, `${block.code}\nexport {};\n`, block.file.replace(/\.ts$/, '.mjs')));
  }
});
