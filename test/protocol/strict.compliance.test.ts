import { describeWorkspaceCompliance } from '../../src/testing/index.js';
import { backendNamed } from '../support/backends.js';

// The whole suite over a driver that fails loudly when the shared layer calls it outside the preconditions
// docs/writing-a-backend.md promises (test/support/backends.ts also fails a test whose violation was swallowed).
describeWorkspaceCompliance('strict driver (examples/kv-backend.ts)', backendNamed('strict (third-party driver)'));
