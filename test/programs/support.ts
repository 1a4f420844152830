import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { bwrapEngine } from '../../src/programs/bwrap-engine.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

/**
 * Whether the sandbox runs here. Under CI it must: a missing engine fails the suite instead of skipping it
 * (.ci/run installs bubblewrap).
 */
export async function sandboxAvailable(): Promise<boolean> {
  try {
    await bwrapEngine().available();
    return true;
  } catch (error) {
    if (process.env.CI !== undefined && process.env.CI !== '') throw error;
    return false;
  }
}

/** One entry of a tree as compared across the sandbox and a plain directory. */
export type TreeEntry =
  { kind: 'directory' } | { kind: 'file'; content: string; executable: boolean } | { kind: 'symlink'; target: string };

/** Everything under a host directory, by relative path, links not followed. */
export function hostTree(root: string, skip: (path: string) => boolean = () => false): Record<string, TreeEntry> {
  const tree: Record<string, TreeEntry> = {};
  const visit = (rel: string) => {
    for (const name of fs.readdirSync(rel === '' ? root : join(root, rel)).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      if (skip(path)) continue;
      const stat = fs.lstatSync(join(root, path));
      if (stat.isSymbolicLink()) tree[path] = { kind: 'symlink', target: fs.readlinkSync(join(root, path)) };
      else if (stat.isDirectory()) {
        tree[path] = { kind: 'directory' };
        visit(path);
      } else
        tree[path] = { kind: 'file', content: fs.readFileSync(join(root, path)).toString('base64'), executable: (stat.mode & 0o100) !== 0 };
    }
  };
  visit('');
  return tree;
}

/** The workspace's tree in the same shape (its live state). */
export async function workspaceTree(
  workspace: SnapshotableWorkspace,
  skip: (path: string) => boolean = () => false,
): Promise<Record<string, TreeEntry>> {
  const tree: Record<string, TreeEntry> = {};
  for await (const entry of (await workspace.snapshotTree()).entries()) {
    if (skip(entry.path)) continue;
    if (entry.kind === 'directory') tree[entry.path] = { kind: 'directory' };
    else if (entry.kind === 'symlink') tree[entry.path] = { kind: 'symlink', target: new TextDecoder().decode(await entry.bytes()) };
    else tree[entry.path] = { kind: 'file', content: Buffer.from(await entry.bytes()).toString('base64'), executable: entry.executable };
  }
  return Object.fromEntries(Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Runs `script` with bash in a plain directory, with the environment the sandbox gives (plus `env`). */
export function runPlain(dir: string, script: string, env: Record<string, string> = {}): { status: number | null; stderr: string } {
  const result = spawnSync('bash', ['-c', script], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb', ...env },
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr };
}

/** Pids of processes whose command line starts with `name`. */
export function processesNamed(name: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').startsWith(name)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
