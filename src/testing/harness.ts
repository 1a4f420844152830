import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import type { WorkspaceLimits } from '../workspace/limits.js';
import type { SnapshotableWorkspace } from '../workspace/types.js';

export interface CreateOptions {
  readOnly?: boolean;
  limits?: Partial<WorkspaceLimits>;
}

/** What a backend hands the compliance suite. */
export interface ComplianceHarness {
  /** A fresh, empty workspace. The suite disposes it after each test. */
  create(options?: CreateOptions): Promise<SnapshotableWorkspace>;
  /**
   * Plants a link at `linkPath` (workspace-relative) whose target text is `target`. Default, on a backend
   * with file kinds: `workspace.symlink(target, linkPath)`. A host-like backend may plant it behind the
   * workspace's back, as another process would.
   */
  symlink?(workspace: SnapshotableWorkspace, linkPath: string, target: string): Promise<void>;
  /** `false` for a backend without executable bits and symlinks (a driver without the optional primitives). */
  fileKinds?: false;
  /**
   * Calls made to the driver outside its preconditions since the last call, for a workspace over
   * `strictDriver(yourDriver, sink)`: the suite expects none after each test.
   */
  violations?(): readonly string[];
}

/** Creates workspaces for one test and disposes them after it. */
export function workspaces(harness: ComplianceHarness): (options?: CreateOptions) => Promise<SnapshotableWorkspace> {
  const created: SnapshotableWorkspace[] = [];
  afterEach(async () => {
    for (const workspace of created.splice(0)) await workspace.dispose();
  });
  return async (options) => {
    const workspace = await harness.create(options);
    created.push(workspace);
    return workspace;
  };
}

/** What `expectError` checks beyond the class and code. */
export interface ExpectErrorOptions {
  /**
   * Host paths the error must not name (a model sees error messages): checked in the message, the JSON form
   * and the cause, together with any absolute path under `/tmp/`, `/home/` or `/private/`.
   */
  hostPaths?: readonly string[];
}

/** Asserts that `action` rejects with a `WorkspaceError` of this class and code, and returns the error. */
export async function expectError(
  action: Promise<unknown>,
  name: string,
  code: string,
  options: ExpectErrorOptions = {},
): Promise<Error & { code: string; path?: string }> {
  let caught: unknown;
  try {
    await action;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${name} (${code})`).toBeInstanceOf(Error);
  const error = caught as Error & { code: string; path?: string };
  expect({ name: error.name, code: error.code }).toEqual({ name, code });
  if (options.hostPaths !== undefined) expectNoHostPath(error, options.hostPaths);
  return error;
}

/** Neither the message, the JSON form nor the cause of `error` names any of `hostPaths` or another absolute host path. */
export function expectNoHostPath(error: Error & { cause?: unknown }, hostPaths: readonly string[]): void {
  const cause = error.cause instanceof Error ? error.cause.message : '';
  const text = `${error.message}\n${JSON.stringify(error)}\n${String(error.cause ?? '')}\n${cause}`;
  for (const hostPath of hostPaths) expect(text).not.toContain(hostPath);
  expect(text).not.toMatch(/\/tmp\/|\/home\/|\/private\//);
}

/** Every file (text as latin1 so bytes compare exactly), directory (`path/`) and link (`<link>`) in a workspace. */
export async function contentsOf(workspace: SnapshotableWorkspace, base = '/'): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await workspace.list(base)) {
    if (entry.isSymlink) out[entry.path] = '<link>';
    else if (entry.isDirectory) {
      out[`${entry.path}/`] = '';
      Object.assign(out, await contentsOf(workspace, entry.path));
    } else out[entry.path] = Buffer.from((await workspace.readBytes(entry.path)).content).toString('latin1');
  }
  return out;
}

/**
 * Makes real temp directories (symlinks resolved, so a `/tmp` link does not confuse path comparisons), all
 * removed after each test, or after the file's tests with `{ until: 'file' }` for directories that outlive one.
 * Call it before registering hooks that dispose what lives in the directories: vitest runs hooks as a stack.
 */
export function tempDirs(options: { prefix?: string; until?: 'test' | 'file' } = {}): (prefix?: string) => string {
  const dirs: string[] = [];
  (options.until === 'file' ? afterAll : afterEach)(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix = options.prefix ?? 'sessionfs-test-') => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    dirs.push(dir);
    return dir;
  };
}

export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
