import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/create-session.js';
import { shellTool } from '../../src/shell/shell-tool.js';
import { contentsOf, tempDirs } from '../../src/testing/harness.js';
import type { ExecLimits } from '../../src/programs/types.js';
import { sandboxAvailable } from './support.js';

const available = await sandboxAvailable();
const scratch = tempDirs();

/** A run past its total is refused whole: the call fails, and the workspace holds exactly what it held. */
describe.skipIf(!available)('what one program run may change in total', () => {
  for (const backend of ['memory', 'host'] as const) {
    describe(backend, () => {
      async function expectRefusedWhole(limits: ExecLimits, command: string, limit: string): Promise<void> {
        await using session = await createSession({ backend, exec: { limits } });
        await session.filesystem.write('kept.txt', 'as it was');
        await session.filesystem.write('dir/inner.txt', 'inner');
        const before = await contentsOf(session.filesystem);
        const operations = (await session.history()).turns.flatMap((turn) => turn.operations).length;
        await expect(session.exec(command)).rejects.toMatchObject({
          name: 'LimitExceededError',
          code: 'EFBIG',
          message: expect.stringContaining(limit),
        });
        expect(await contentsOf(session.filesystem)).toEqual(before);
        expect((await session.history()).turns.flatMap((turn) => turn.operations)).toHaveLength(operations);
      }

      it('bytes: files that each pass the file size limit but together pass changedBytes apply nothing', async () => {
        await expectRefusedWhole(
          { changedBytes: 1024 * 1024 },
          'echo changed > kept.txt; rm dir/inner.txt; head -c 600000 /dev/zero > a.bin; head -c 600000 /dev/zero > b.bin',
          'changedBytes',
        );
      });

      it('the default total stops `truncate -s 1100M a b` (sparse files that would fill the server)', async () => {
        await expectRefusedWhole({}, 'echo changed > kept.txt; truncate -s 1100M a.bin b.bin', 'changedBytes');
      });

      it('entries: more entries than changedEntries apply nothing', async () => {
        await expectRefusedWhole({ changedEntries: 10 }, 'echo changed > kept.txt; mkdir many; touch many/f{1..20}', 'changedEntries');
      });

      it('a run within both totals applies; a file rewritten with its own bytes costs nothing', async () => {
        await using session = await createSession({ backend, exec: { limits: { changedBytes: 1000, changedEntries: 4 } } });
        await session.filesystem.write('same.txt', 'x'.repeat(900));
        const result = await session.exec('head -c 900 same.txt > copy && mv copy same.txt; head -c 1000 /dev/zero > a.bin');
        expect(result.changed).toEqual({ created: ['a.bin'], modified: [], deleted: [] });
        expect((await session.filesystem.stat('a.bin')).sizeBytes).toBe(1000);
      });

      it('through the bash tool a run past its total is a failed call, rolled back', async () => {
        await using session = await createSession({ backend, exec: { limits: { changedBytes: 1000 } } });
        await session.filesystem.write('kept.txt', 'as it was');
        const ran = await session.runTool(shellTool({ mode: 'sandbox' }), { command: 'echo x > kept.txt; head -c 2000 /dev/zero > a.bin' });
        expect(ran).toMatchObject({ success: false, code: 'EFBIG' });
        expect(ran.message).toContain('changedBytes');
        expect(await contentsOf(session.filesystem)).toEqual({ 'kept.txt': 'as it was' });
      });
    });
  }

  it('a host root passed its total is left untouched (the program wrote only its staging layer)', async () => {
    const root = scratch('sessionfs-test-total-');
    fs.writeFileSync(join(root, 'a.txt'), 'a');
    await using session = await createSession({ backend: 'host', root, allowedHostRoots: [root], exec: { limits: { changedBytes: 100 } } });
    await expect(session.exec('echo b > a.txt; head -c 200 /dev/zero > big.bin')).rejects.toMatchObject({ code: 'EFBIG' });
    expect(fs.readdirSync(root).filter((name) => !name.startsWith('.'))).toEqual(['a.txt']);
    expect(fs.readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a');
  });
});

describe('the run totals are checked like every limit', () => {
  it.each([
    ['changedBytes', 0],
    ['changedBytes', -1],
    ['changedBytes', 1.5],
    ['changedBytes', '1024'],
    ['changedBytes', Number.POSITIVE_INFINITY],
    ['changedEntries', 0],
    ['changedEntries', null],
    ['changedEntries', 2 ** 60],
  ])('%s: %s is refused at createSession', async (name, value) => {
    await expect(createSession({ backend: 'memory', exec: { limits: { [name]: value } as never } })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      code: 'EINVAL',
      message: expect.stringContaining(`limits.${name} must be a positive whole number`),
    });
  });

  it('positive whole numbers are taken', async () => {
    await using session = await createSession({ backend: 'memory', exec: { limits: { changedBytes: 1, changedEntries: 1 } } });
    expect(session.id).toBeTruthy();
  });

  it('an unknown total is refused, not ignored', async () => {
    await expect(createSession({ backend: 'memory', exec: { limits: { totalBytes: 1 } as never } })).rejects.toMatchObject({
      code: 'EINVAL',
      message: expect.stringContaining('totalBytes'),
    });
  });
});
