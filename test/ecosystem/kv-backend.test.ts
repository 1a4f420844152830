import { createKvWorkspace } from '../../examples/kv-backend.js';
import { describeWorkspaceCompliance } from '../../src/testing/index.js';

// The one-file third backend of examples/ is held to the same contract as the built-in ones.
describeWorkspaceCompliance('key-value example', { create: async (options) => createKvWorkspace(options) });
