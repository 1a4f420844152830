import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import { HostWorkspace } from '../../src/backends/host/index.js';
import { MemoryWorkspace } from '../../src/backends/memory/index.js';
import type { WorkspaceLimits } from '../../src/workspace/limits.js';
import type { BackendKind, SnapshotableWorkspace } from '../../src/workspace/types.js';

export interface BackendUnderTest {
  name: BackendKind;
  create(options?: { readOnly?: boolean; limits?: Partial<WorkspaceLimits> }): Promise<SnapshotableWorkspace>;
}

/** Every backend the host-mount and session suites run on. */
export const BACKENDS: BackendUnderTest[] = [
  { name: 'memory', create: async (options) => new MemoryWorkspace(options) },
  { name: 'host', create: async (options) => new HostWorkspace(options) },
];

/** Workspaces created in one test, disposed after it. */
export function workspaceFactory(
  backend: BackendUnderTest,
): (options?: Parameters<BackendUnderTest['create']>[0]) => Promise<SnapshotableWorkspace> {
  const created: SnapshotableWorkspace[] = [];
  afterEach(async () => {
    for (const workspace of created.splice(0)) await workspace.dispose();
  });
  return async (options) => {
    const workspace = await backend.create(options);
    created.push(workspace);
    return workspace;
  };
}

/** A tree entry: text or bytes for a file, `null` for an empty directory, `{ link }` for a symlink. */
export type TreeSpec = Record<string, string | Uint8Array | null | { link: string }>;

/** Real temp directories (resolved, so `/tmp` links do not confuse comparisons), removed after each test. */
export function hostTrees(): { dir(): string; tree(spec: TreeSpec, base?: string): string } {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const dir = (): string => {
    const created = realpathSync(mkdtempSync(join(tmpdir(), 'sessionfs-mounts-')));
    dirs.push(created);
    return created;
  };
  return {
    dir,
    tree(spec, base = dir()) {
      writeTree(base, spec);
      return base;
    },
  };
}

export function writeTree(base: string, spec: TreeSpec): void {
  for (const [path, content] of Object.entries(spec)) {
    const target = join(base, path);
    if (content === null) {
      mkdirSync(target, { recursive: true });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    if (typeof content === 'object' && !(content instanceof Uint8Array)) symlinkSync(content.link, target);
    else writeFileSync(target, content);
  }
}

/** Every file (text as latin1 so bytes compare exactly) and directory (`path/`) in a workspace. */
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

/** Runs `action`, returning what it threw (or failing when it did not). */
export async function caught(action: () => Promise<unknown>): Promise<Error & { code?: string; path?: string }> {
  try {
    await action();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the action to throw');
}
