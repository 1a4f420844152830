import { DriverWorkspace, type CreateWorkspaceOptions } from '../../workspace/create-workspace.js';
import { MemoryDriver } from './driver.js';

export type MemoryWorkspaceOptions = Pick<CreateWorkspaceOptions, 'readOnly' | 'limits' | 'policy' | 'audit' | 'protect'>;

/**
 * The embedded default backend: the shared layer over a {@link MemoryDriver}, a persistent tree held in
 * memory with O(1) snapshots.
 */
export class MemoryWorkspace extends DriverWorkspace {
  declare readonly backend: 'memory';
  declare protected readonly driver: MemoryDriver;

  /** `driver` is how {@link fork} hands over a forked tree; callers leave it out. */
  constructor(options: MemoryWorkspaceOptions = {}, driver: MemoryDriver = new MemoryDriver()) {
    super(driver, options);
  }

  /**
   * An independent workspace with the same content, limits, policy and read-only state, and the same
   * history: every snapshot record this workspace took before the fork restores (and diffs, and patches)
   * in the fork too, while snapshots taken afterwards by either one belong to it alone. O(1) in the number
   * of files: the persistent tree is shared, and a write on either side copies only its own path.
   */
  fork(): MemoryWorkspace {
    const options = { limits: this.limits, policy: this.policy, readOnly: this.readOnly, protect: this.protect };
    return new MemoryWorkspace(options, this.driver.fork());
  }
}
