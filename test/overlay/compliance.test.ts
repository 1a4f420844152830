import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import { OverlayWorkspace } from '../../src/index.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { describeWorkspaceCompliance } from '../../src/testing/index.js';

// The overlay is held to the whole contract over an empty lower directory; links are planted in the lower
// directory (the only place an overlay's links come from), behind the upper layer's back.
const lowers = new WeakMap<SnapshotableWorkspace, string>();
const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await fs.rm(dir, { recursive: true, force: true });
});

describeWorkspaceCompliance('overlay', {
  create: async (options) => {
    const lower = await fs.mkdtemp(join(tmpdir(), 'sessionfs-lower-'));
    made.push(lower);
    const workspace = new OverlayWorkspace({ ...options, lower, allowedHostRoots: [lower] });
    lowers.set(workspace, await fs.realpath(lower));
    return workspace;
  },
  symlink: async (workspace, linkPath, target) => {
    const at = join(lowers.get(workspace) as string, ...linkPath.split('/').filter((s) => s !== ''));
    await fs.mkdir(dirname(at), { recursive: true });
    await fs.symlink(target, at);
  },
});
