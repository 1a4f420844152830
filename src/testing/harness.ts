import { afterEach, expect } from 'vitest';
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
  /** Backends with symlinks: plant a link at `linkPath` (workspace-relative) whose target text is `target`. */
  symlink?(workspace: SnapshotableWorkspace, linkPath: string, target: string): Promise<void>;
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

/** Asserts that `action` rejects with a `WorkspaceError` of this class and code, and returns the error. */
export async function expectError(action: Promise<unknown>, name: string, code: string): Promise<Error & { code: string; path?: string }> {
  let caught: unknown;
  try {
    await action;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${name} (${code})`).toBeInstanceOf(Error);
  const error = caught as Error & { code: string; path?: string };
  expect({ name: error.name, code: error.code }).toEqual({ name, code });
  return error;
}

/** Every file and directory with its text content, for whole-workspace comparisons. */
export async function contentsOf(workspace: SnapshotableWorkspace, base = '/'): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await workspace.list(base)) {
    if (entry.isDirectory) {
      out[`${entry.path}/`] = '';
      Object.assign(out, await contentsOf(workspace, entry.path));
    } else if (entry.isFile && !entry.isSymlink) {
      out[entry.path] = Buffer.from((await workspace.readBytes(entry.path)).content).toString('latin1');
    } else {
      out[entry.path] = '<link>';
    }
  }
  return out;
}

export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
