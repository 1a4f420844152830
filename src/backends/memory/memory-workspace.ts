import { DriverWorkspace, type CreateWorkspaceOptions } from '../../workspace/create-workspace.js';
import { MemoryDriver } from './driver.js';

export type MemoryWorkspaceOptions = Pick<CreateWorkspaceOptions, 'readOnly' | 'limits' | 'policy' | 'audit'>;

/**
 * The embedded default backend: the shared layer over a {@link MemoryDriver}, a persistent tree held in
 * memory with O(1) snapshots.
 */
export class MemoryWorkspace extends DriverWorkspace {
  declare readonly backend: 'memory';

  constructor(options: MemoryWorkspaceOptions = {}) {
    super(new MemoryDriver(), options);
  }
}
