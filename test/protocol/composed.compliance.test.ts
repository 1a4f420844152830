import { describeWorkspaceCompliance } from '../../src/testing/index.js';
import { BACKENDS } from '../support/backends.js';

// A composition is held to the same contract as every backend, over each kind of mount (with one mount at the
// root, so the suite's "fresh, empty workspace" holds); mount-specific behaviour is in test/compose/mounts.test.ts.
for (const backend of BACKENDS.filter((entry) => entry.name.startsWith('compose over ')))
  describeWorkspaceCompliance(backend.name, backend);
