import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createSession } from '../../src/session/index.js';
import { workspaceTools } from '../../src/shell/index.js';
import { localSessionStore } from '../../src/store/local-store.js';
import type { WorkspaceToolName } from '../../src/tools/index.js';
import { CLI, REPO } from './support.js';

const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));

/**
 * A session made by the library in the local store `dir`: turn 1 scaffolds src/a.ts and README.md, turn 2
 * edits a line of src/a.ts (op-3), turn 3 deletes README.md (op-4).
 */
export async function makeSession(dir: string, name: string): Promise<void> {
  const session = await createSession({ store: localSessionStore({ dir }), sessionId: name });
  const run = (tool: WorkspaceToolName, params: unknown) => session.runTool(tools.get(tool)!, params);
  await session.turn('scaffold');
  await run('write_file', { path: 'src/a.ts', content: 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n' });
  await run('write_file', { path: 'README.md', content: '# demo\n' });
  await session.turn('edit');
  await run('edit_file', { path: 'src/a.ts', old_string: 'b = 2', new_string: 'b = 20' });
  await session.turn('tidy');
  await run('delete', { path: 'README.md' });
  await session.dispose();
}

/** `sessionfs inspect …` running: its URL (token included), origin and token. */
export interface RunningInspector {
  url: string;
  origin: string;
  token: string;
  port: number;
  stop(): Promise<void>;
}

export function startInspector(args: readonly string[]): Promise<RunningInspector> {
  const child = spawn(process.execPath, [CLI, 'inspect', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`inspect printed no URL: ${stderr}`)), 20_000);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`inspect exited ${code}: ${stderr}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n')[0];
      if (!stdout.includes('\n') || line === undefined) return;
      clearTimeout(timer);
      const url = new URL(line);
      resolve({
        url: line,
        origin: url.origin,
        token: url.searchParams.get('token') ?? '',
        port: Number(url.port),
        async stop() {
          child.kill('SIGTERM');
          await ended;
        },
      });
    });
  });
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A plain HTTP request with exactly the headers given (a browser's fetch could not set Host or Origin). */
export function rawRequest(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
