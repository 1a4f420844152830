import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/create-session.js';
import { sandboxAvailable } from './support.js';

const available = await sandboxAvailable();

/** What a program leaves in its staging layer that is no file, link or directory, or no UTF-8 name. */
describe.skipIf(!available)('capturing what a program left', () => {
  for (const kind of ['memory', 'host'] as const) {
    describe(kind, () => {
      it('a name that is not UTF-8 fails the call with a typed error naming no host path, and nothing is applied', async () => {
        await using session = await createSession({ backend: kind });
        const failure = await session.exec("echo x > kept.txt; touch $'bad\\xff'").then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toMatchObject({ name: 'InvalidPathError', code: 'EINVAL', message: expect.stringContaining('bad\\xff') });
        expect(String((failure as Error).message)).not.toMatch(/sessionfs-exec|upper/);
        expect(await session.filesystem.exists('kept.txt')).toBe(false);
      });

      it('a fifo, socket or device made where a file or directory stood deletes it (the program no longer sees it)', async () => {
        await using session = await createSession({ backend: kind });
        await session.filesystem.write('pipe', 'was a file');
        await session.filesystem.write('dir/inside.txt', 'in a directory');
        await session.filesystem.write('untouched.txt', 'stays');
        const result = await session.exec(
          'rm pipe; mkfifo pipe; rm -r dir; python3 -c \'import socket; socket.socket(socket.AF_UNIX).bind("dir")\'; mkfifo new-fifo; ls',
        );
        expect(result.stdout.split('\n')).toEqual(['dir', 'new-fifo', 'pipe', 'untouched.txt', '']);
        expect(result.changed).toEqual({ created: [], modified: [], deleted: ['dir', 'pipe'] });
        expect((await session.filesystem.list('')).map((entry) => entry.name)).toEqual(['untouched.txt']);
      });
    });
  }
});
