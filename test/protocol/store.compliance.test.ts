import { describeWorkspaceCompliance } from '../../src/testing/index.js';
import { backendNamed } from '../support/backends.js';

describeWorkspaceCompliance('store (remote sessions)', backendNamed('store (remote sessions)'));
