import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll } from 'vitest';
import { composeWorkspace, HostWorkspace, MemoryWorkspace, OverlayWorkspace } from '../../src/index.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { describeWorkspaceCompliance } from '../../src/testing/index.js';

// A composition is held to the same contract as every backend: here with one mount at the root, so the
// suite's "fresh, empty workspace" holds; mount-specific behaviour is in mounts.test.ts.
describeWorkspaceCompliance('compose over memory', {
  create: async (options) =>
    composeWorkspace({ ...options, mounts: [{ path: '/', workspace: new MemoryWorkspace(), access: 'read-write' }] }),
});

const hostRoots = new WeakMap<SnapshotableWorkspace, string>();

describeWorkspaceCompliance('compose over host', {
  create: async (options) => {
    const host = new HostWorkspace();
    const composed = composeWorkspace({ ...options, mounts: [{ path: '/', workspace: host, access: 'read-write' }] });
    hostRoots.set(composed, host.root);
    return composed;
  },
  symlink: async (workspace, linkPath, target) => {
    const at = join(hostRoots.get(workspace) as string, ...linkPath.split('/').filter((s) => s !== ''));
    await fs.mkdir(dirname(at), { recursive: true });
    await fs.symlink(target, at);
  },
});

const overlayLowers = new WeakMap<SnapshotableWorkspace, string>();
const madeLowers: string[] = [];
afterAll(async () => {
  for (const dir of madeLowers) await fs.rm(dir, { recursive: true, force: true });
});

describeWorkspaceCompliance('compose over overlay', {
  create: async (options) => {
    const lower = await fs.realpath(await fs.mkdtemp(join(tmpdir(), 'sessionfs-lower-')));
    madeLowers.push(lower);
    const overlay = new OverlayWorkspace({ lower, allowedHostRoots: [lower] });
    const composed = composeWorkspace({ ...options, mounts: [{ path: '/', workspace: overlay, access: 'read-write' }] });
    overlayLowers.set(composed, lower);
    return composed;
  },
  symlink: async (workspace, linkPath, target) => {
    const at = join(overlayLowers.get(workspace) as string, ...linkPath.split('/').filter((s) => s !== ''));
    await fs.mkdir(dirname(at), { recursive: true });
    await fs.symlink(target, at);
  },
});
