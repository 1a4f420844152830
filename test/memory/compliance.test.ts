import { MemoryWorkspace } from '../../src/backends/memory/index.js';
import { describeWorkspaceCompliance } from '../../src/testing/index.js';

describeWorkspaceCompliance('memory', { create: async (options) => new MemoryWorkspace(options) });
