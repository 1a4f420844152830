import { execFile } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';
import { CLI, REPO, type RunResult } from './support.js';

/** `sessionfs mcp …` spoken to by the official SDK client over stdio, as a desktop client would. */
export interface ServedSession {
  client: Client;
  /** The server's pid (to kill it as a crash would). */
  pid: number;
  call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  stderr(): string;
  /** Resolves with the exit code (or signal) once the server process ends. */
  exited: Promise<number | string | null>;
}

export async function serveSession(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ServedSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    cwd: REPO,
    env: { ...(process.env as Record<string, string>), ...(env as Record<string, string>) },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'stored-sessions-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('the server has no pid');
  const exited = new Promise<number | string | null>((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve(null);
      }
    }, 20);
  });
  return {
    client,
    pid,
    exited,
    stderr: () => stderr,
    async call(name, callArgs) {
      const result = await client.callTool({ name, arguments: callArgs });
      const text = (result.content as { text?: string }[]).map((c) => c.text ?? '').join('\n');
      return { text, isError: result.isError === true };
    },
  };
}

/** Runs the built CLI to its end, with extra environment variables. */
export function runCliWith(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO, timeout: 60_000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The round trip a crash must not break: files written through the tools, the server killed with SIGKILL
 * (no exit work, no dispose), a new server on the same name reads them back and goes on.
 */
export async function killAndResume(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const first = await serveSession(args, env);
  expect(await first.call('write_file', { path: 'notes/plan.md', content: '# Plan\n\n1. write\n' })).toMatchObject({ isError: false });
  expect(await first.call('write_file', { path: 'src/app.ts', content: 'export const app = 1;\n' })).toMatchObject({ isError: false });
  expect(await first.call('edit_file', { path: 'src/app.ts', old_string: 'app = 1', new_string: 'app = 2' })).toMatchObject({
    isError: false,
  });
  // A failed call is rolled back and publishes nothing.
  expect(await first.call('edit_file', { path: 'src/app.ts', old_string: 'not there', new_string: 'x' })).toMatchObject({ isError: true });
  process.kill(first.pid, 'SIGKILL');
  await first.exited;
  await first.client.close().catch(() => undefined);

  const second = await serveSession(args, env);
  expect((await second.call('read_file', { path: 'src/app.ts' })).text).toContain('export const app = 2;');
  expect((await second.call('read_file', { path: 'notes/plan.md' })).text).toContain('1. write');
  expect(await second.call('write_file', { path: 'notes/done.md', content: 'resumed\n' })).toMatchObject({ isError: false });

  // One server per session: a second one while this one holds it exits 3, saying so.
  const rival = await runCliWith(['mcp', ...args], env);
  expect(rival.code).toBe(3);
  expect(rival.stderr).toMatch(/--session "[^"]+" is open in another sessionfs process .*lease is held until \d{4}-/);
  expect(second.stderr()).not.toContain('Error');
  await second.client.close();
  await second.exited;
}
