import * as fs from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { tempDirs } from '../../src/testing/harness.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { searchedByDefault } from '../../src/workspace/search/patterns.js';
import type { Progress } from '../../src/workspace/progress.js';

const tempDir = tempDirs({ prefix: 'sessionfs-line-literals-', until: 'file' });

/** Lines holding `function`, `Async`, both (in either order, or across a line break), with a BOM and CRLFs. */
const SOURCE = [
  '\uFEFFfunction first() {}',
  'const a = fooAsync();',
  'export async function loadAsync(input) {\r',
  '  return function () {}; // Async later on this line',
  'function',
  'Async',
  'function\tsaveAsync() {}',
  ...Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? `function f${i}() {}` : `const x${i} = yAsync;`)),
  'async function lastAsync() {}',
].join('\n');

/** The lines a plain line-by-line search finds. */
function expected(pattern: string): [number, string][] {
  const regex = new RegExp(pattern, 'u');
  return SOURCE.replace(/^\uFEFF/, '')
    .split('\n')
    .map((raw, index): [number, string] => [index + 1, raw.replace(/\r$/, '')])
    .filter(([, line]) => regex.test(line));
}

async function searched(pattern: string): Promise<Record<string, [number, string][]>> {
  const root = tempDir();
  fs.writeFileSync(join(root, 'code.js'), SOURCE);
  const memory = createWorkspace(memoryDriver());
  await memory.write('code.js', SOURCE);
  const host = createWorkspace(hostDriver({ root }));
  const found: Record<string, [number, string][]> = {};
  for (const [name, ws] of [
    ['memory', memory],
    ['host', host],
  ] as const) {
    found[name] = (await ws.grep(pattern, {})).map((match) => [match.lineNumber, match.lineContent]);
    await ws.dispose();
  }
  return found;
}

/**
 * grep skips a line unless it holds every literal its pattern's matches contain (`function` and `Async` in
 * `function\s+\w+Async`), finding them by jumping from one literal's next occurrence to another's, and
 * counts lines only up to a match: the lines and numbers found are those of a plain line-by-line search.
 */
describe('grep finds the lines holding every literal of its pattern', () => {
  for (const pattern of ['function\\s+\\w+Async', 'Async.*function', 'function \\w+\\(\\) \\{\\}', 'x\\d+ = yAsync', 'function\\nAsync'])
    it(`/${pattern}/ on memory and host`, async () => {
      const found = await searched(pattern);
      expect(found.memory).toEqual(expected(pattern));
      expect(found.host).toEqual(expected(pattern));
    });
});

describe('grep on a tree where most files hold no match', () => {
  it('counts every file it searched in its progress, those without a match too', async () => {
    const root = tempDir();
    const files = 600;
    for (let i = 0; i < files; i += 1) {
      fs.mkdirSync(join(root, `d${i % 3}`), { recursive: true });
      fs.writeFileSync(join(root, `d${i % 3}`, `f${i}.txt`), i === 7 ? 'the needle\n' : 'nothing here\n');
    }
    const host = createWorkspace(hostDriver({ root }));
    const events: Progress[] = [];
    expect((await host.grep('needle', { onProgress: (event) => events.push({ ...event }) })).map((m) => m.path)).toEqual(['d1/f7.txt']);
    const last = events.at(-1) as Progress;
    expect(last.done).toBe(last.total);
    // Each of the 603 entries walked, then each of the 600 files searched.
    expect(last.done).toBe(files + 3 + files);
    await host.dispose();
  });
});

describe('the files grep searches without a glob', () => {
  it("are those picomatch's `**` matches without `dot`", () => {
    const matches = picomatch('**', { dot: false });
    const names = ['a', '.a', '..a', 'a.', 'b.c', '.', 'x y', '*', '[z]'];
    for (const first of names)
      for (const second of ['', ...names])
        for (const third of ['', ...names]) {
          const path = [first, second, third].filter((name) => name !== '').join('/');
          expect(searchedByDefault(path), path).toBe(matches(path));
        }
    expect(searchedByDefault('')).toBe(false);
  });
});
