import { execFileSync, spawn } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.js';
import { assertBuilt, CLI, REPO, runCli } from './support.js';
import { tempDirs } from '../../src/testing/harness.js';

const tempDir = tempDirs({ prefix: 'sessionfs-exit-' });

/** A host directory holding `project/` (the mount) with a text file, a file to delete and a binary file. */
async function project(): Promise<{ hostDir: string; project: string }> {
  const hostDir = tempDir();
  const dir = join(hostDir, 'project');
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'src/app.ts'), 'export const answer = 41;\n');
  await writeFile(join(dir, 'notes.md'), 'todo\n');
  await writeFile(join(dir, 'logo.bin'), Buffer.from([0, 1, 2, 255]));
  return { hostDir, project: dir };
}

/** Lines of JSON-RPC over a spawned CLI's stdio, answered by id. */
function rawServer(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiting = new Map<number, (message: unknown) => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    let newline: number;
    while ((newline = out.indexOf('\n')) !== -1) {
      const message = JSON.parse(out.slice(0, newline)) as { id?: number };
      out = out.slice(newline + 1);
      if (message.id !== undefined) waiting.get(message.id)?.(message);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let next = 1;
  const request = (method: string, params: unknown): Promise<unknown> => {
    const id = next++;
    const answer = new Promise<unknown>((resolve) => waiting.set(id, resolve));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return answer;
  };
  const ready = request('initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'exit-test', version: '1' } });
  return { child, request, ready, exited, stderr: () => err };
}

describe('sessionfs mcp --patch-out and --write-back (the real CLI)', () => {
  for (const backend of ['memory', 'host'] as const) {
    it(`writes the session's patch and writes the work back when the client closes (${backend})`, async () => {
      assertBuilt();
      const { hostDir, project: dir } = await project();
      const original = join(hostDir, 'original');
      await cp(dir, original, { recursive: true });
      const patchFile = join(hostDir, 'work.patch');
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--backend', backend, '--mount', dir, '--allow', hostDir, '--patch-out', patchFile, '--write-back'],
        cwd: REPO,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const client = new Client({ name: 'exit-test', version: '1' });
      await client.connect(transport);
      const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
      expect((await call('edit_file', { path: 'project/src/app.ts', old_string: '41', new_string: '42' })).isError).toBe(false);
      expect((await call('write_file', { path: 'project/src/new file.ts', content: 'export {};\n' })).isError).toBe(false);
      expect((await call('delete', { path: 'project/notes.md' })).isError).toBe(false);
      await client.close(); // stdin ends: the server finishes its exit work, then exits

      const patch = await readFile(patchFile, 'utf8');
      expect(patch).toContain('diff --git a/project/src/app.ts b/project/src/app.ts');
      expect(patch).toContain('-export const answer = 41;\n+export const answer = 42;\n');
      // The patch applies with native git to the tree the session started from (paths under the mount).
      const applied = join(hostDir, 'applied');
      await mkdir(applied);
      await cp(original, join(applied, 'project'), { recursive: true });
      execFileSync('git', ['apply', '--binary', patchFile], { cwd: applied });
      for (const root of [applied, hostDir]) {
        expect(await readFile(join(root, 'project/src/app.ts'), 'utf8')).toBe('export const answer = 42;\n');
        expect(await readFile(join(root, 'project/src/new file.ts'), 'utf8')).toBe('export {};\n');
        await expect(readFile(join(root, 'project/notes.md'))).rejects.toMatchObject({ code: 'ENOENT' });
        expect(await readFile(join(root, 'project/logo.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
      }
      expect(stderr).toContain("sessionfs: wrote the session's patch (3 files changed) to");
      expect(stderr).toContain('sessionfs: wrote back 2 changed and deleted 1 files in the mounts');
    });
  }

  it('on SIGTERM writes the patch, leaves a host file changed meanwhile alone, reports it on stderr, exits 1', async () => {
    assertBuilt();
    const { hostDir, project: dir } = await project();
    const patchFile = join(hostDir, 'out.patch');
    const server = rawServer(['mcp', '--mount', dir, '--allow', hostDir, '--patch-out', patchFile, '--write-back']);
    await server.ready;
    const call = (name: string, args: unknown) => server.request('tools/call', { name, arguments: args });
    await call('write_file', { path: 'project/notes.md', content: 'done\n' });
    await call('edit_file', { path: 'project/src/app.ts', old_string: '41', new_string: '42' });
    await writeFile(join(dir, 'notes.md'), 'edited by a human meanwhile\n');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(1);
    expect(await readFile(join(dir, 'notes.md'), 'utf8')).toBe('edited by a human meanwhile\n');
    expect(await readFile(join(dir, 'src/app.ts'), 'utf8')).toBe('export const answer = 42;\n');
    expect(await readFile(patchFile, 'utf8')).toContain('-todo\n+done\n');
    const stderr = server.stderr();
    expect(stderr).toContain(
      'sessionfs: write-back conflict, left as it is on the host: project/notes.md (changed at the destination since the baseline)',
    );
    expect(stderr).not.toContain(dir);
  });

  it('shows the patch and write-back progress on stderr with --progress (counts, never a host path), and not without', async () => {
    assertBuilt();
    for (const flag of [['--progress'], []]) {
      const { hostDir, project: dir } = await project();
      const patchFile = join(hostDir, 'out.patch');
      const server = rawServer(['mcp', '--mount', dir, '--allow', hostDir, '--patch-out', patchFile, '--write-back', ...flag]);
      await server.ready;
      const call = (name: string, args: unknown) => server.request('tools/call', { name, arguments: args });
      await call('write_file', { path: 'project/notes.md', content: 'done\n' });
      await call('write_file', { path: 'project/src/more.ts', content: 'export {};\n' });
      server.child.stdin.end();
      expect(await server.exited).toBe(0);
      const stderr = server.stderr();
      expect(await readFile(join(dir, 'src/more.ts'), 'utf8')).toBe('export {};\n');
      if (flag.length === 0) {
        expect(stderr).not.toMatch(/sessionfs: (writing the patch|writing back|hydrating):/);
        continue;
      }
      // stderr is a pipe, not a terminal: plain lines, each update on its own line, no cursor codes.
      expect(stderr).toContain('sessionfs: hydrating: 3 files, 35 B, done\n');
      expect(stderr).toContain('sessionfs: writing the patch: 2/2, done\n');
      expect(stderr).toMatch(/sessionfs: writing back: (\d+)\/\1, done\n/);
      expect(stderr).not.toContain('\x1b[K');
      expect(stderr).not.toContain(hostDir);
    }
  });

  it('refuses --quiet with --progress', async () => {
    expect(await runCli(['mcp', '--quiet', '--progress'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--quiet and --progress contradict each other'),
    });
  });

  it('without changes writes an empty patch and exits 0', async () => {
    assertBuilt();
    const { hostDir } = await project();
    const patchFile = join(hostDir, 'empty.patch');
    const server = rawServer(['mcp', '--patch-out', patchFile]);
    await server.ready;
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
    expect(await readFile(patchFile, 'utf8')).toBe('');
  });

  it('parses --patch-out and --write-back', () => {
    expect(parseCommandLine(['mcp', '--mount', 'a', '--allow', '.', '--patch-out', 'out.patch', '--write-back'])).toMatchObject({
      command: 'mcp',
      patchOut: 'out.patch',
      writeBack: true,
    });
    expect(parseCommandLine(['mcp'])).not.toHaveProperty('patchOut');
    expect(() => parseCommandLine(['mcp', '--mount', 'a', '--allow', '.', '--write-back', '--read-only'])).toThrow(/nothing to write back/);
  });

  it('refuses --write-back without a mount, and --patch-out without a file', async () => {
    expect(await runCli(['mcp', '--write-back'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--write-back writes the changes back to the mounts'),
    });
    expect(await runCli(['mcp', '--patch-out', ' '])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--patch-out needs a non-empty file path'),
    });
    expect(await runCli(['demo', '--patch-out', 'x'])).toMatchObject({ code: 2 });
  });
});
