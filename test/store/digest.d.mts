import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

export function digestOf(workspace: SnapshotableWorkspace): Promise<string>;
