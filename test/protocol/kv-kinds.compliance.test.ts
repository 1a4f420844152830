import { describeWorkspaceCompliance } from '../../src/testing/index.js';
import { backendNamed } from '../support/backends.js';

// One file per backend so that vitest runs the suites in parallel; the backends are defined once, in test/support/backends.ts.
describeWorkspaceCompliance(
  'key-value example with file kinds, strict (examples/kv-backend.ts)',
  backendNamed('kv with file kinds, strict (third-party driver)'),
);
