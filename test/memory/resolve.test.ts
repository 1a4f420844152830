import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import type { MemoryDriver } from '../../src/backends/memory/driver.js';
import type { TreeNode } from '../../src/backends/memory/tree.js';
import { resolveLinks, type LinkTree } from '../../src/workspace/links.js';

/** Where `path` leads in the driver's tree now, worked out from scratch (no remembered answer). */
function fresh(driver: MemoryDriver, path: string, followFinal: boolean): string {
  const tree: LinkTree<TreeNode> = {
    root: driver.tree,
    child: (directory, name) => (directory.type === 'directory' ? directory.children.get(name) : undefined),
    kind: (node) => node.type,
    target: (node) => (node.type === 'symlink' ? node.target : ''),
  };
  try {
    const resolved = resolveLinks(tree, path, followFinal);
    return `${resolved.path} ${resolved.node?.type ?? 'missing'}`;
  } catch (error) {
    return `error ${(error as { code?: string }).code}`;
  }
}

/** The same, as the driver answers it (`kind` does not follow the final link, `resolveNow` does). */
async function answered(driver: MemoryDriver, path: string, followFinal: boolean): Promise<string> {
  try {
    if (!followFinal) return `kind ${(await driver.kind(path)) ?? 'missing'}`;
    const real = driver.resolveNow(path);
    return `${real} ${(await driver.kind(real)) ?? 'missing'}`;
  } catch (error) {
    return `error ${(error as { code?: string }).code}`;
  }
}

// Few names, so that links, their targets and the questions often meet.
const name = fc.constantFrom('a', 'b');
const path = fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
const step = fc.oneof(
  fc.record({ op: fc.constant('file' as const), path }),
  fc.record({ op: fc.constant('directory' as const), path }),
  fc.record({ op: fc.constant('link' as const), path, target: fc.constantFrom('a', 'b', '../a', '../../b/a', 'b/a', '.', '..', '/a') }),
  fc.record({ op: fc.constant('remove' as const), path }),
  fc.record({ op: fc.constant('ask' as const), path, followFinal: fc.boolean() }),
);

describe('the memory driver resolves paths', () => {
  it('as a resolution from scratch does, whatever changed since its last answer (links made, replaced or removed)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const driver = memoryDriver();
        for (const item of steps) {
          try {
            if (item.op === 'file')
              await driver.writeFiles([{ kind: 'file', path: item.path, content: new Uint8Array(1), executable: false }]);
            else if (item.op === 'directory') await driver.mkdir(item.path);
            else if (item.op === 'link') await driver.writeFiles([{ kind: 'symlink', path: item.path, target: item.target }]);
            else if (item.op === 'remove') await driver.remove(item.path);
          } catch {
            // A step the tree refuses changes nothing; the questions still have to be answered right.
          }
          if (item.op !== 'ask') continue;
          const expected = fresh(driver, item.path, item.followFinal);
          const got = await answered(driver, item.path, item.followFinal);
          if (item.followFinal) expect(got).toBe(expected);
          // `kind` answers "missing" below a file, where a resolution fails with ENOTDIR.
          else if (expected === 'error ENOTDIR') expect(got).toBe('kind missing');
          else expect(got).toBe(expected.startsWith('error') ? expected : `kind ${expected.split(' ')[1]}`);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
