import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../../src/testing/harness.js';
import { assertBuilt, CLI, REPO } from './support.js';

/**
 * `sessionfs mcp --mount DIR` without `--backend`: directory mounts are shown in place (the overlay), so the
 * first call never waits for a copy of a big tree; `--backend memory` (and `--patch-out`, or a file mount)
 * still copies them in at start. Told apart by a host file written after the session started: shown in
 * place, the model sees it; copied, it does not.
 */
describe('sessionfs mcp shows directory mounts in place unless asked to copy them', () => {
  const tempDir = tempDirs({ prefix: 'sessionfs-lazy-', until: 'file' });

  async function sees(extra: readonly string[], mountFile = false): Promise<{ later: boolean; first: string }> {
    assertBuilt();
    const hostDir = tempDir();
    const project = join(hostDir, 'project');
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'first.txt'), 'first\n');
    const mount = mountFile ? join(project, 'first.txt') : project;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', ...extra, '--mount', mount, '--allow', hostDir],
      cwd: REPO,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'lazy-mounts-test', version: '1' });
    await client.connect(transport);
    try {
      const text = async (path: string) => {
        const result = await client.callTool({ name: 'read_file', arguments: { path } });
        return { ok: result.isError !== true, text: (result.content as { text: string }[]).map((c) => c.text).join('\n') };
      };
      const path = mountFile ? 'first.txt' : 'project/first.txt';
      const first = await text(path); // waits for the session, hydrated or not
      await writeFile(join(project, 'later.txt'), 'written on the host after the start\n');
      const later = await text(mountFile ? 'later.txt' : 'project/later.txt');
      return { later: later.ok && later.text.includes('written on the host after the start'), first: first.text };
    } finally {
      await client.close();
    }
  }

  it('by default, a directory mount is read in place: a host file written after the start is seen', async () => {
    const { later, first } = await sees([]);
    expect(first).toContain('first');
    expect(later).toBe(true);
  });

  it('--backend memory copies the mount at start: a later host file is not seen', async () => {
    const { later, first } = await sees(['--backend', 'memory']);
    expect(first).toContain('first');
    expect(later).toBe(false);
  });

  it('--patch-out keeps the copy (the patch needs the whole start state at exit)', async () => {
    const dir = tempDir();
    const { later } = await sees(['--patch-out', join(dir, 'out.patch')]);
    expect(later).toBe(false);
  });

  it('a file mount (which an overlay cannot show) is still copied in', async () => {
    const { first } = await sees([], true);
    expect(first).toContain('first');
  });
});
