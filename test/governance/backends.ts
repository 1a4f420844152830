import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { kvDriver } from '../../examples/kv-backend.js';
import { HostWorkspace } from '../../src/backends/host/index.js';
import { MemoryDriver } from '../../src/backends/memory/index.js';
import type { BackendDriver } from '../../src/workspace/driver.js';
import { createWorkspace, type CreateWorkspaceOptions, type DriverWorkspace } from '../../src/workspace/create-workspace.js';

type Options = Pick<CreateWorkspaceOptions, 'policy' | 'readOnly' | 'limits' | 'audit'>;

export interface Backend {
  name: string;
  create(options?: Options): DriverWorkspace;
  /** A second workspace over the same files as `workspace` (seeing them through its own options). */
  sameFiles(workspace: DriverWorkspace, options: Options): DriverWorkspace;
  /** Plants a symbolic link, on backends that have them. */
  symlink?(workspace: DriverWorkspace, linkPath: string, target: string): Promise<void>;
}

/** Governance lives in the shared layer: every backend, a third-party one included, gets the same rules. */
export const BACKENDS: Backend[] = [
  {
    name: 'memory',
    create: (options) => createWorkspace(new MemoryDriver(), options),
    sameFiles: (workspace, options) => createWorkspace(driverOf(workspace), options),
  },
  {
    name: 'host',
    create: (options) => new HostWorkspace(options),
    sameFiles: (workspace, options) => new HostWorkspace({ ...options, root: workspace.root }),
    symlink: async (workspace, linkPath, target) => {
      await fs.symlink(target, join(workspace.root, ...linkPath.split('/')));
    },
  },
  {
    name: 'kv (third-party driver)',
    create: (options) => createWorkspace(kvDriver(), options),
    sameFiles: (workspace, options) => createWorkspace(driverOf(workspace), options),
  },
];

/** The driver under a shared-layer workspace (a test-only look behind the protected field). */
function driverOf(workspace: DriverWorkspace): BackendDriver {
  return (workspace as unknown as { driver: BackendDriver }).driver;
}

/** A factory whose workspaces are disposed after each test. */
export function disposing(backend: Backend): {
  create: (options?: Options) => DriverWorkspace;
  /** An unrestricted workspace to plant files in, and one over the same files with `options`. */
  pair: (options: Options) => { open: DriverWorkspace; governed: DriverWorkspace };
} {
  const created: DriverWorkspace[] = [];
  afterEach(async () => {
    // The governed view first: the open one owns the files (a host temp root) and removes them.
    for (const workspace of created.splice(0).reverse()) await workspace.dispose();
  });
  const track = (workspace: DriverWorkspace): DriverWorkspace => (created.push(workspace), workspace);
  return {
    create: (options) => track(backend.create(options)),
    pair: (options) => {
      const open = track(backend.create());
      return { open, governed: track(backend.sameFiles(open, options)) };
    },
  };
}

/** Every file with its text, for "nothing changed" comparisons. */
export async function snapshotText(workspace: DriverWorkspace): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await workspace.list(dir)) {
      if (entry.isDirectory) {
        out[`${entry.path}/`] = '';
        await visit(entry.path);
      } else out[entry.path] = (await workspace.read(entry.path)).content;
    }
  };
  await visit('/');
  return out;
}
