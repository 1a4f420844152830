import { InvalidArgumentError } from '../../workspace/errors.js';
import { MemoryDriver } from './driver.js';

export type { MemoryDriver } from './driver.js';

/**
 * The embedded default backend's driver: a persistent tree held in memory, with O(1) snapshots and forks;
 * `createWorkspace(memoryDriver())` is a memory workspace. It takes no options.
 */
export function memoryDriver(...options: []): MemoryDriver {
  const given = options as unknown[];
  if (given.length > 0 && given[0] !== undefined)
    throw new InvalidArgumentError('memoryDriver takes no options (readOnly, limits, policy, audit and protect go to createWorkspace)');
  return new MemoryDriver();
}
