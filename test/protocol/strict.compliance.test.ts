import { MemoryDriver } from '../../src/backends/memory/driver.js';
import { describeWorkspaceCompliance, strictDriver } from '../../src/testing/index.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { backendNamed } from '../support/backends.js';

// The whole suite over drivers that fail loudly when the shared layer calls them outside the preconditions
// docs/writing-a-backend.md promises; a violation the shared layer swallowed still fails the test.
describeWorkspaceCompliance('strict driver (examples/kv-backend.ts)', backendNamed('strict (third-party driver)'));

// The memory driver has the optional members the example lacks (move, copy, openFile).
const violations: string[] = [];
describeWorkspaceCompliance('strict driver (memory)', {
  create: async (options) =>
    createWorkspace(
      strictDriver(new MemoryDriver(), (message) => violations.push(message)),
      options,
    ),
  violations: () => violations.splice(0),
});
