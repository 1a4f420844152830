import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, REPO } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

beforeAll(() => assertBuilt());

const scratch = tempDirs({ prefix: 'sessionfs-cli-protect-' });

describe('sessionfs mcp --root on a git checkout', () => {
  it("refuses edit_file and write_file of .git/config with EPERM, so the user's next git status runs nothing planted", async () => {
    const root = scratch();
    const marker = join(scratch(), 'pwned');
    execFileSync('git', ['init', '-q', root]);
    const config = readFileSync(join(root, '.git/config'), 'utf8');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--root', root],
      cwd: REPO,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sessionfs-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
        (result.content as { text: string }[]).map((c) => c.text).join('\n');
      await client.callTool({ name: 'read_file', arguments: { path: '.git/config' } });
      const planted = `[core]\n\tfsmonitor = "touch ${marker}; false"`;
      const edited = await client.callTool({
        name: 'edit_file',
        arguments: { path: '.git/config', old_string: '[core]', new_string: planted },
      });
      expect(edited.isError).toBe(true);
      expect(text(edited)).toMatch(/^Error \[EPERM\]: protected by the workspace's protect rule '\*\*\/\.git\/\*\*'/);
      const written = await client.callTool({ name: 'write_file', arguments: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' } });
      expect(written.isError).toBe(true);
    } finally {
      await client.close();
    }
    expect(readFileSync(join(root, '.git/config'), 'utf8')).toBe(config);
    execFileSync('git', ['status', '--porcelain'], { cwd: root, stdio: 'ignore' });
    expect(existsSync(marker)).toBe(false);
  });
});
