import { execa } from 'execa';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Workspace } from '../../src/workspace/types.js';

/** Every file of a workspace as `path → content`, directories as `path/ → ''`, sorted. */
export async function workspaceTree(workspace: Workspace, dir = ''): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  for (const entry of await workspace.list(dir === '' ? '/' : dir)) {
    if (entry.isDirectory) {
      tree[`${entry.path}/`] = '';
      Object.assign(tree, await workspaceTree(workspace, entry.path));
    } else {
      tree[entry.path] = Buffer.from((await workspace.readBytes(entry.path)).content).toString('latin1');
    }
  }
  return sorted(tree);
}

/** The same for a directory on disk. */
export function diskTree(root: string, dir = ''): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const name of readdirSync(join(root, dir))) {
    const path = dir === '' ? name : `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) {
      tree[`${path}/`] = '';
      Object.assign(tree, diskTree(root, path));
    } else {
      tree[path] = readFileSync(join(root, path)).toString('latin1');
    }
  }
  return sorted(tree);
}

function sorted(tree: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Real GNU bash in a fresh temporary directory, with a fixed locale so sort and ls order bytes. */
export class RealBash {
  readonly dir = mkdtempSync(join(tmpdir(), 'sessionfs-realbash-'));

  async run(command: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    // --norc: bash started with its stdin on a socket and no SHLVL takes itself for a remote shell and
    // sources ~/.bashrc (slow, and not the same bash on every machine).
    const result = await execa('bash', ['--noprofile', '--norc', '-c', command], {
      cwd: this.dir,
      reject: false,
      env: { LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: this.dir },
      extendEnv: false,
      stripFinalNewline: false,
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
