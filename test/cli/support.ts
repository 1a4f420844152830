import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(REPO, 'dist/sessionfs.mjs');

/** The CLI tests spawn the built CLI: `npm test` builds first. Fail clearly when dist is missing or stale. */
export function assertBuilt(): void {
  let built: number;
  try {
    built = statSync(CLI).mtimeMs;
  } catch {
    throw new Error('dist/sessionfs.mjs is missing: run `npm run build` (npm test does it) before these tests');
  }
  const newest = newestMtime(join(REPO, 'src'));
  if (newest > built) throw new Error('dist is older than src: run `npm run build` (npm test does it) before these tests');
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: readonly string[], options: { cwd?: string } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: options.cwd ?? REPO, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The official SDK client connected to `server` over an in-memory transport. */
export async function connectInMemory(server: Server, name = 'sessionfs-test'): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

/** Makes every write of `session`'s workspace land `ms` after it is asked for (a call slow enough to cancel). */
export function slowWrites(session: { filesystem: { writeBytes: (...args: never[]) => Promise<unknown> } }, ms: number): void {
  const real = session.filesystem;
  const writeBytes = real.writeBytes;
  (real as unknown as Record<string, unknown>).writeBytes = async (...args: never[]) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return writeBytes.apply(real, args);
  };
}
