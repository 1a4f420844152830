import { describeWorkspaceCompliance } from '../../src/testing/index.js';
import { backendNamed } from '../support/backends.js';

// One file per backend so that vitest runs the suites in parallel; the backends are defined once, in test/support/backends.ts.
describeWorkspaceCompliance('overlay', backendNamed('overlay'));
