import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/args.js';
import { workspacePrompt } from '../../src/tools/index.js';
import { assertBuilt, CLI, REPO } from '../cli/support.js';

describe('the shell on every surface', () => {
  it('workspacePrompt explains the bash tool only when it is on, and when to prefer the file tools', () => {
    expect(workspacePrompt()).not.toContain('`bash');
    const prompt = workspacePrompt({ shell: true });
    expect(prompt).toContain('`bash { command, cwd?, timeout_ms? }`');
    expect(prompt).toContain('no network');
    expect(prompt).toContain('`edit_file` for an exact change');
    expect(prompt).toContain('To search a whole tree, prefer the `grep` and `glob` tools');
    expect(workspacePrompt({ shell: 'host' })).toContain('real programs from an allow-list');
  });

  it('sessionfs mcp takes --shell, and --shell-host only on a host directory', () => {
    expect(parseCommandLine(['mcp', '--shell'])).toMatchObject({ command: 'mcp', shell: true });
    expect(parseCommandLine(['mcp', '--root', '.', '--shell-host'])).toMatchObject({ backend: 'host', shell: 'host' });
    expect(parseCommandLine(['mcp'])).not.toHaveProperty('shell');
    expect(() => parseCommandLine(['mcp', '--shell-host'])).toThrow(UsageError);
    expect(() => parseCommandLine(['mcp', '--backend', 'host', '--shell', '--shell-host'])).toThrow('exclude each other');
  });

  it('sessionfs mcp --shell serves the bash tool over MCP, its instructions say so, and nothing leaves the workspace', async () => {
    assertBuilt();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--backend', 'host', '--shell'],
      cwd: REPO,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sessionfs-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('bash');
      expect(client.getInstructions()).toContain('`bash');
      const result = await client.callTool({ name: 'bash', arguments: { command: 'echo hi > a.txt && ls && pwd && cat /etc/hostname' } });
      const text = (result.content as { text: string }[]).map((c) => c.text).join('\n');
      expect(result.isError).not.toBe(true);
      expect(text).toContain('Exit code: 1');
      expect(text).toContain('a.txt\n/');
      expect(text).toContain('Changed: a.txt');
    } finally {
      await client.close();
    }
  });
});
