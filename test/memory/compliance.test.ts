import { MemoryWorkspace } from '../../src/backends/memory/index.js';
import { describeWorkspaceCompliance } from '../compliance/index.js';

describeWorkspaceCompliance('memory', { create: async (options) => new MemoryWorkspace(options) });
