import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { HostWorkspace, type HostWorkspaceOptions } from '../../src/backends/host/index.js';

/** Workspaces and scratch directories for one test, removed after it. */
export function scratch(): {
  workspace: (options?: HostWorkspaceOptions) => HostWorkspace;
  dir: (prefix?: string) => string;
} {
  const workspaces: HostWorkspace[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const ws of workspaces.splice(0)) await ws.dispose();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    workspace: (options) => {
      const ws = new HostWorkspace(options);
      workspaces.push(ws);
      return ws;
    },
    dir: (prefix = 'sessionfs-test-') => {
      const dir = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), prefix)));
      dirs.push(dir);
      return dir;
    },
  };
}

/** Runs `action`, expects a WorkspaceError of this class, and checks it leaks no host path. */
export async function expectError(action: Promise<unknown>, name: string, hostPaths: string[] = []): Promise<Error & { code: string }> {
  let caught: unknown;
  try {
    await action;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${name}`).toBeInstanceOf(Error);
  const error = caught as Error & { code: string; cause?: unknown };
  expect(error.name).toBe(name);
  expectNoHostPath(error, hostPaths);
  return error;
}

/** Neither the message, the JSON form nor the cause of `error` mentions any of `hostPaths`. */
export function expectNoHostPath(error: Error & { cause?: unknown }, hostPaths: string[]): void {
  const text = `${error.message}\n${JSON.stringify(error)}\n${String(error.cause ?? '')}\n${error.cause instanceof Error ? error.cause.message : ''}`;
  for (const hostPath of hostPaths) expect(text).not.toContain(hostPath);
  expect(text).not.toMatch(/\/tmp\/|\/home\/|\/private\//);
}

/** A git environment isolated from the user's, for the tests that use the git binary to inspect results. */
export const gitEnv = {
  PATH: process.env.PATH ?? '',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};
