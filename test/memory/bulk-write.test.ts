import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import type { MemoryDriver } from '../../src/backends/memory/driver.js';
import type { DriverBulkEntry } from '../../src/workspace/driver.js';
import { WorkspaceError } from '../../src/workspace/errors.js';

/** Every entry of a driver's tree: its path, kind and (files) text, in walk order. */
async function contents(driver: MemoryDriver): Promise<string[]> {
  const seen: string[] = [];
  for await (const entry of driver.walk('')) {
    if (entry.kind !== 'file') seen.push(`${entry.path}/`);
    else seen.push(`${entry.path}=${new TextDecoder().decode((await driver.readFile(entry.path, { offset: 0 })).content)}`);
  }
  return seen.sort();
}

/** The entries one at a time, as the shared layer writes them without a bulk primitive; the error code of the first failure. */
async function oneByOne(driver: MemoryDriver, entries: readonly DriverBulkEntry[]): Promise<string | undefined> {
  for (const entry of entries) {
    try {
      if (entry.kind === 'directory') await driver.mkdir(entry.path);
      else if (entry.kind === 'file')
        await driver.writeFile(entry.path, entry.content, { mode: 'overwrite', executable: entry.executable });
      else await driver.symlink(entry.target, entry.path);
    } catch (error) {
      return (error as WorkspaceError).code;
    }
  }
  return undefined;
}

const segment = fc.constantFrom('a', 'a-b', 'b', 'c.txt');
const entry = fc.oneof(
  fc.record({
    kind: fc.constant('file' as const),
    path: fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/')),
    content: fc.string({ maxLength: 3 }).map((text) => new TextEncoder().encode(text)),
    executable: fc.constant(false),
  }),
  fc.record({
    kind: fc.constant('directory' as const),
    path: fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/')),
  }),
);

describe('the memory driver writes a batch in one step (writeFiles)', () => {
  it('ends as the same entries written one by one would, failing with the same first error and keeping what came before it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 30 }), fc.array(entry, { maxLength: 5 }), async (entries, before) => {
        const bulk = memoryDriver();
        const single = memoryDriver();
        // The same starting tree (possibly in the way of the batch).
        const start = before.filter((candidate) => candidate.kind === 'directory');
        await oneByOne(bulk, start);
        await oneByOne(single, start);
        const failure = await oneByOne(single, entries);
        let bulkFailure: string | undefined;
        try {
          await bulk.writeFiles(entries);
        } catch (error) {
          bulkFailure = (error as WorkspaceError).code;
        }
        expect(bulkFailure).toBe(failure);
        expect(await contents(bulk)).toEqual(await contents(single));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a file it replaces as a file of the same creation time, with a new version', async () => {
    const driver = memoryDriver();
    await driver.writeFile('x/y.txt', new TextEncoder().encode('old'), { mode: 'overwrite' });
    const before = await driver.stat('x/y.txt');
    await driver.writeFiles([{ kind: 'file', path: 'x/y.txt', content: new TextEncoder().encode('new'), executable: false }]);
    const after = await driver.stat('x/y.txt');
    expect(after.createdAt).toEqual(before.createdAt);
    expect(after.version).toBeGreaterThan(before.version as number);
  });
});
