import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/create-session.js';
import { DEFAULT_ETC_ENTRIES } from '../../src/programs/system-view.js';
import { sandboxAvailable } from './support.js';

const available = await sandboxAvailable();

describe.skipIf(!available)("the sandbox's /etc", () => {
  it('shows the host files it lists as read-only copies, mounting only the directories (the cheap start)', async () => {
    await using session = await createSession({ backend: 'memory' });
    const hostFiles = DEFAULT_ETC_ENTRIES.filter((name) => fs.statSync(`/etc/${name}`, { throwIfNoEntry: false })?.isFile() === true);
    const hostDirs = DEFAULT_ETC_ENTRIES.filter((name) => fs.statSync(`/etc/${name}`, { throwIfNoEntry: false })?.isDirectory() === true);
    expect(hostFiles).toContain('ld.so.cache');
    const script = [
      'grep -c " /etc" /proc/self/mountinfo',
      ...hostFiles.map((name) => `cksum < /etc/${name}`),
      'for f in /etc/*; do [ -f "$f" ] && ! [ -w "$f" ] && echo "$f"; done | wc -l',
      '(echo x > /etc/hosts) 2>/dev/null && echo written || echo refused',
      'head -c 5 /etc/passwd',
    ].join('; ');
    const lines = (await session.exec(script)).stdout.trim().split('\n');
    expect(Number(lines[0])).toBeLessThanOrEqual(hostDirs.length);
    expect(lines.slice(1, 1 + hostFiles.length)).toEqual(
      hostFiles.map((name) =>
        execFileSync('cksum', { input: fs.readFileSync(`/etc/${name}`) })
          .toString()
          .trim(),
      ),
    );
    expect(Number(lines[1 + hostFiles.length])).toBe(hostFiles.length + 5);
    expect(lines.slice(2 + hostFiles.length)).toEqual(['refused', 'root:']);
  });

  it('leaves no descriptor of an /etc file or of the engine open in the program', async () => {
    await using session = await createSession({ backend: 'memory' });
    const links = (await session.exec('for f in /proc/self/fd/*; do readlink "$f"; done')).stdout.trim().split('\n');
    expect(links.filter((link) => link.startsWith('/etc') || link.includes('sessionfs-'))).toEqual([]);
  });

  it.skipIf(!fs.existsSync('/etc/resolv.conf'))('with network host, it holds the host resolv.conf, without none', async () => {
    const resolv = fs.readFileSync('/etc/resolv.conf', 'utf8');
    await using session = await createSession({ backend: 'memory' });
    expect((await session.exec('cat /etc/resolv.conf', { network: 'host' })).stdout).toBe(resolv);
    expect((await session.exec('ls /etc/resolv.conf 2>&1 || true')).stdout).toContain('No such file');
  });
});
