import { InvalidArgumentError } from '../workspace/errors.js';
import { ComposeDriver } from './compose-driver.js';
import { MountTable, type MountSpec } from './mount-table.js';

export interface ComposeDriverOptions {
  /** The mount table; routed by longest prefix. A path no mount holds is a read-only, empty part of the tree. */
  mounts: readonly MountSpec[];
}

/**
 * One workspace made of several: each mount shows a workspace (any backend, built by `createWorkspace`) at
 * a path with an access level. `createWorkspace(composeDriver({ mounts }), { policy, … })` is a full
 * workspace (`backend: 'compose'`) whose path rules, limits, locking, glob and grep are the same as every
 * backend's; its policy is judged on composed paths. The composition owns its mounts: `dispose()` disposes
 * each mounted workspace once. See docs/composition.md.
 */
export function composeDriver(options: ComposeDriverOptions): ComposeDriver {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('composeDriver needs an options object');
  const unknown = Object.keys(options).filter((key) => key !== 'mounts');
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `composeDriver takes only mounts, not ${unknown.join(', ')} (readOnly, limits, policy, audit and protect go to createWorkspace)`,
    );
  return new ComposeDriver(new MountTable(options.mounts));
}
