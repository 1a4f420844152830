import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/args.js';
import { assertBuilt, CLI, REPO, runCli } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

const tempDir = tempDirs({ prefix: 'sessionfs-mount-table-', until: 'file' });
let hostDir: string;
beforeAll(async () => {
  hostDir = tempDir();
  await mkdir(join(hostDir, 'repo/src'), { recursive: true });
  await writeFile(join(hostDir, 'repo/src/app.ts'), 'export const a = 1;\n');
  await writeFile(join(hostDir, 'repo/.env'), 'TOKEN=x\n');
  await mkdir(join(hostDir, 'docs'));
  await writeFile(join(hostDir, 'docs/guide.md'), '# guide\n');
});

describe('mcp mount table: --mount SRC:/path:ro, --mount-config, --overlay', () => {
  it('reads where each mount shows and its access from --mount', () => {
    const command = parseCommandLine([
      'mcp',
      '--mount',
      'repo:/code',
      '--mount',
      'docs:/ref/docs:ro',
      '--mount',
      'plain',
      '--mount',
      'x:ro',
      '--allow',
      '.',
    ]);
    expect(command).toMatchObject({
      backend: 'memory',
      mounts: [
        { hostPath: 'repo', path: '/code' },
        { hostPath: 'docs', path: '/ref/docs', readOnly: true },
        { hostPath: 'plain' },
        { hostPath: 'x', readOnly: true },
      ],
    });
    expect((command as { mounts: object[] }).mounts[2]).toEqual({ hostPath: 'plain' });
    expect(() => parseCommandLine(['mcp', '--mount', ':ro', '--allow', '.'])).toThrow(UsageError);
  });

  it('reads a JSON mount table, paths relative to the file, and refuses a malformed one', async () => {
    const file = join(hostDir, 'mounts.json');
    await writeFile(
      file,
      JSON.stringify({
        mounts: [
          { hostPath: 'repo', path: '/', exclude: ['.env'] },
          { hostPath: 'docs', readOnly: true },
        ],
        allow: ['.'],
      }),
    );
    expect(parseCommandLine(['mcp', '--overlay', '--mount-config', file])).toMatchObject({
      backend: 'overlay',
      allow: [hostDir],
      mounts: [
        { hostPath: join(hostDir, 'repo'), path: '/', exclude: ['.env'] },
        { hostPath: join(hostDir, 'docs'), readOnly: true },
      ],
    });
    const bad = join(hostDir, 'bad.json');
    await writeFile(bad, JSON.stringify([{ hostPath: 'repo', readonly: true }]));
    expect(() => parseCommandLine(['mcp', '--mount-config', bad, '--allow', '.'])).toThrow(/mounts\[0\]/);
    const old = join(hostDir, 'old.json');
    await writeFile(old, JSON.stringify([{ hostPath: 'repo', mountPath: '/code' }]));
    expect(() => parseCommandLine(['mcp', '--mount-config', old, '--allow', '.'])).toThrow('`mountPath` is now `path`');
    expect(() => parseCommandLine(['mcp', '--mount-config', join(hostDir, 'missing.json')])).toThrow(UsageError);
    expect(() => parseCommandLine(['mcp', '--overlay'])).toThrow(/at least one --mount/);
    expect(() => parseCommandLine(['mcp', '--overlay', '--root', 'x', '--mount', 'a', '--allow', '.'])).toThrow(UsageError);
  });
});

describe('sessionfs mcp --overlay with a mount table, over stdio', () => {
  beforeAll(() => assertBuilt());

  async function connect(args: string[]): Promise<Client> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], cwd: REPO, stderr: 'pipe' });
    const client = new Client({ name: 'mount-table-test', version: '1.0.0' });
    await client.connect(transport);
    return client;
  }
  const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { text: string }[]).map((c) => c.text).join('\n');

  it('shows each mount where the table says, hides excluded paths, and never writes the host', async () => {
    const client = await connect([
      '--overlay',
      '--mount',
      `${join(hostDir, 'repo')}:/code`,
      '--exclude',
      '.env',
      '--mount',
      `${join(hostDir, 'docs')}:/ref:ro`,
      '--allow',
      hostDir,
    ]);
    try {
      const listed = text(await client.callTool({ name: 'glob', arguments: { pattern: '**/*' } }));
      expect(listed).toContain('code/src/app.ts');
      expect(listed).toContain('ref/guide.md');
      const secret = await client.callTool({ name: 'read_file', arguments: { path: 'code/.env' } });
      expect(secret.isError).toBe(true);
      expect(text(secret)).not.toContain('TOKEN');
      const written = await client.callTool({ name: 'write_file', arguments: { path: 'code/src/app.ts', content: 'changed\n' } });
      expect(written.isError).not.toBe(true);
      expect(text(await client.callTool({ name: 'read_file', arguments: { path: 'code/src/app.ts' } }))).toContain('changed');
      expect(listed).not.toContain(hostDir);
    } finally {
      await client.close();
    }
    expect(await readFile(join(hostDir, 'repo/src/app.ts'), 'utf8')).toBe('export const a = 1;\n');
  });

  it('exits 2 on a malformed mount table', async () => {
    const result = await runCli(['mcp', '--overlay']);
    expect(result.code).toBe(2);
  });
});
