import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/create-session.js';
import { sandboxAvailable } from './support.js';

const available = await sandboxAvailable();
const repo = fileURLToPath(new URL('../..', import.meta.url));

/** What a program prints, base64 so that the runner's scrub of host paths in output cannot hide a leak. */
async function unscrubbed(command: string): Promise<string> {
  await using session = await createSession({ backend: 'memory' });
  const result = await session.exec(`(${command}) | base64 -w0`);
  return Buffer.from(result.stdout, 'base64').toString('utf8');
}

describe.skipIf(!available)('what a sandboxed program can learn of the host', () => {
  it('finds no staging path in the mount table nor in the command line of the sandbox pid 1', async () => {
    const seen = await unscrubbed('cat /proc/self/mountinfo; for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done');
    expect(seen).toContain(' /workspace ');
    expect(seen).toContain('bwrap');
    expect(seen).not.toContain('sessionfs-');
    expect(seen).not.toContain(`${fs.realpathSync(tmpdir())}/`);
  });

  it('holds no descriptor the server inherited without close-on-exec (a parent pipe stays out of reach)', () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'sessionfs-test-fds-'));
    try {
      const script = join(dir, 'list-fds.mts');
      fs.writeFileSync(
        script,
        [
          `import { createSession } from ${JSON.stringify(join(repo, 'src/session/create-session.ts'))};`,
          `await using session = await createSession({ backend: 'memory' });`,
          `const result = await session.exec('ls /proc/self/fd');`,
          `process.stdout.write(result.stdout);`,
        ].join('\n'),
      );
      // bash opens descriptor 7 without close-on-exec, as a server's own parent may have left one open.
      const listed = execFileSync('bash', ['-c', `exec 7>/dev/null; exec "${process.execPath}" --import tsx "${script}"`], {
        cwd: repo,
        encoding: 'utf8',
      });
      const fds = listed.trim().split('\n').map(Number);
      // 0, 1 and 2, and the descriptor `ls` reads the directory through.
      expect(fds.filter((fd) => fd > 2)).toHaveLength(1);
      expect(fds).not.toContain(7);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
