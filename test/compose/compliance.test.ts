import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { composeWorkspace, HostWorkspace, MemoryWorkspace } from '../../src/index.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { describeWorkspaceCompliance } from '../compliance/index.js';

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
