import * as fs from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HostWorkspace } from '../../src/backends/host/index.js';
import { describeWorkspaceCompliance } from '../../src/testing/index.js';

describeWorkspaceCompliance('host', {
  create: async (options) => new HostWorkspace(options),
  symlink: async (workspace, linkPath, target) => {
    const at = join(workspace.root, ...linkPath.split('/').filter((s) => s !== ''));
    await fs.mkdir(dirname(at), { recursive: true });
    await fs.symlink(target, at);
  },
});
