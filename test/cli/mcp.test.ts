import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_TOOL_NAMES } from '../../src/tools/index.js';
import { assertBuilt, CLI, REPO } from './support.js';
import { SESSION_KINDS } from '../support/backends.js';
import { tempDirs } from '../../src/testing/harness.js';

interface TextResult {
  text: string;
  isError: boolean;
}

const backends = SESSION_KINDS;

for (const backend of backends) {
  describe(`sessionfs mcp --backend ${backend}, driven by the SDK's Client over stdio`, () => {
    const tempDir = tempDirs({ prefix: 'sessionfs-mcp-', until: 'file' });
    let hostDir: string;
    let client: Client;
    let transport: StdioClientTransport;
    let stderr = '';
    const seen: string[] = [];

    const call = async (name: string, args: Record<string, unknown>): Promise<TextResult> => {
      const result = await client.callTool({ name, arguments: args });
      const content = result.content as { type: string; text: string }[];
      const text = content.map((c) => c.text).join('\n');
      seen.push(text);
      return { text, isError: result.isError === true };
    };

    beforeAll(async () => {
      assertBuilt();
      hostDir = tempDir();
      const project = join(hostDir, 'project');
      await mkdir(join(project, 'src'), { recursive: true });
      await writeFile(join(project, 'src/app.ts'), 'export const answer = 41;\nexport const name = "app";\n');
      await writeFile(join(project, 'notes.md'), 'todo\ntodo\n');
      transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--backend', backend, '--mount', project, '--allow', hostDir, '--search-timeout', '1500'],
        cwd: REPO,
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      client = new Client({ name: 'sessionfs-test', version: '1.0.0' });
      await client.connect(transport);
    });

    afterAll(async () => {
      await client?.close();
      for (const text of [...seen, stderr]) expect(text).not.toContain(hostDir);
    });

    it('lists the tool suite plus snapshot, restore and diff, with JSON Schemas', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...WORKSPACE_TOOL_NAMES, 'snapshot', 'restore', 'diff', 'export_patch', 'write_back']);
      const edit = tools.find((t) => t.name === 'edit_file');
      expect(edit?.inputSchema).toMatchObject({ type: 'object', required: ['path'] });
      expect(client.getInstructions()).toContain('rolled back');
    });

    it('reads a mounted file', async () => {
      const result = await call('read_file', { path: 'project/src/app.ts' });
      expect(result).toEqual({ isError: false, text: '     1\texport const answer = 41;\n     2\texport const name = "app";' });
    });

    it('writes a file, without touching the host', async () => {
      expect(await call('write_file', { path: 'project/src/new.ts', content: 'export {};\n' })).toEqual({
        isError: false,
        text: 'Created project/src/new.ts (11 bytes).',
      });
      expect((await call('edit_file', { path: 'project/src/app.ts', old_string: '41', new_string: '42' })).text).toBe(
        'Replaced 1 occurrence in project/src/app.ts (at line 1).',
      );
      expect((await call('read_file', { path: 'project/src/app.ts', limit: 1 })).text).toContain('answer = 42');
      expect(await readFile(join(hostDir, 'project/src/app.ts'), 'utf8')).toContain('answer = 41');
    });

    it('rolls back a failing edit and says so', async () => {
      const failed = await call('edit_file', { path: 'project/notes.md', old_string: 'todo', new_string: 'done' });
      expect(failed.isError).toBe(true);
      expect(failed.text).toMatch(/^Error \[EINVAL\]: old_string occurs 2 times in project\/notes\.md/);
      expect(failed.text).toContain('rolled back');
      expect((await call('read_file', { path: 'project/notes.md' })).text).toBe('     1\ttodo\n     2\ttodo');
    });

    it('refuses an escape without leaking a host path', async () => {
      for (const path of ['../../../etc/passwd', '/../secret']) {
        const result = await call('read_file', { path });
        expect(result.isError).toBe(true);
        expect(result.text).toMatch(/^Error \[EACCES\]/);
        expect(result.text).not.toContain(hostDir);
      }
      const copy = await call('copy', { source: 'project/notes.md', destination: '../notes.md' });
      expect(copy.text).toMatch(/^Error \[EACCES\]/);
    });

    it('answers other requests while a catastrophic grep runs, times it out with ETIMEDOUT, and keeps working', async () => {
      await call('write_file', { path: 'trap.txt', content: `${'a'.repeat(48)}!\n` });
      let settled = false;
      const hostile = call('grep', { pattern: '^(a+)+$', path: 'trap.txt' }).finally(() => (settled = true));
      // Requests that are not tool calls are answered at once (a regex on the server's event loop would
      // hold them until the grep ends); tool calls run one at a time, so a read waits for the grep's turn.
      await client.ping();
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      expect(settled).toBe(false);
      expect((await call('read_file', { path: 'project/notes.md' })).text).toContain('todo');
      const timedOut = await hostile;
      expect(timedOut.isError).toBe(true);
      expect(timedOut.text).toMatch(/^Error \[ETIMEDOUT\]: grep passed its deadline of 1500 ms/);
      expect((await call('grep', { pattern: 'a!$', path: 'trap.txt' })).text).toContain('trap.txt:1:');
      expect((await call('delete', { path: 'trap.txt' })).isError).toBe(false);
    });

    it('reports invalid parameters and unknown tools as errors', async () => {
      const invalid = await call('read_file', {});
      expect(invalid.isError).toBe(true);
      expect(invalid.text).toMatch(/EINVAL/);
      const unknown = await call('format_disk', {});
      expect(unknown).toMatchObject({ isError: true });
      expect(unknown.text).toContain('no tool named "format_disk"');
    });

    it('snapshots, diffs and restores by id, never showing a snapshot record', async () => {
      const snap = await call('snapshot', { tag: 'before-cleanup' });
      const id = /Snapshot (\S+) \(before-cleanup\) saved\./.exec(snap.text)?.[1];
      expect(id).toBeDefined();
      await call('delete', { path: 'project/src', recursive: true });
      expect((await call('diff', { from: id })).text).toContain('D project/src/app.ts');
      const sinceStart = await call('diff', {});
      expect(sinceStart.text).toMatch(/between initial and now/);
      expect(sinceStart.text).toContain('D project/src/app.ts');
      expect((await call('restore', { id })).text).toBe(`Restored snapshot ${id}.`);
      expect((await call('read_file', { path: 'project/src/new.ts' })).isError).toBe(false);
      const unknown = await call('restore', { id: 'nope' });
      expect(unknown.text).toMatch(/^Error \[ESNAPSHOT\]: unknown snapshot id "nope"/);
      expect((await call('restore', { id: 'initial' })).isError).toBe(false);
      expect((await call('read_file', { path: 'project/src/new.ts' })).text).toMatch(/^Error \[ENOENT\]/);
      expect((await call('read_file', { path: 'project/src/app.ts' })).text).toContain('answer = 41');
    });
  });
}

describe('sessionfs mcp options', () => {
  const tempDir = tempDirs({ prefix: 'sessionfs-mcp-opts-', until: 'file' });
  let hostDir: string;
  beforeAll(async () => {
    assertBuilt();
    hostDir = tempDir();
    await mkdir(join(hostDir, 'docs'), { recursive: true });
    await writeFile(join(hostDir, 'docs/guide.md'), '# Guide\n');
  });

  async function connect(extra: string[]): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--mount', join(hostDir, 'docs'), '--allow', hostDir, ...extra],
      cwd: REPO,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sessionfs-test', version: '1.0.0' });
    await client.connect(transport);
    return client;
  }

  const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { text: string }[]).map((c) => c.text).join('\n');

  it('--read-only serves reads and refuses changes with EROFS', async () => {
    const client = await connect(['--read-only']);
    try {
      expect(text(await client.callTool({ name: 'read_file', arguments: { path: 'docs/guide.md' } }))).toBe('     1\t# Guide');
      const write = await client.callTool({ name: 'write_file', arguments: { path: 'docs/new.md', content: 'x' } });
      expect(write.isError).toBe(true);
      expect(text(write)).toMatch(/^Error \[EROFS\]: the workspace is read-only/);
      expect(client.getInstructions()).toContain('read-only');
    } finally {
      await client.close();
    }
  });

  it('--read-before-write refuses to change a file the model has not read', async () => {
    const client = await connect(['--read-before-write']);
    try {
      const args = { path: 'docs/guide.md', old_string: '# Guide', new_string: '# Handbook' };
      const refused = await client.callTool({ name: 'edit_file', arguments: args });
      expect(text(refused)).toMatch(/^Error \[ETOOL\]: docs\/guide\.md exists and has not been read in this session/);
      await client.callTool({ name: 'read_file', arguments: { path: 'docs/guide.md' } });
      expect(text(await client.callTool({ name: 'edit_file', arguments: args }))).toBe(
        'Replaced 1 occurrence in docs/guide.md (at line 1).',
      );
    } finally {
      await client.close();
    }
  });

  it('exits cleanly when the client closes stdin', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp', '--backend', 'host'], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});
