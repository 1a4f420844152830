export { composeDriver, type ComposeDriverOptions } from './factory.js';
export type { ComposeDriver } from './compose-driver.js';
export { MOUNT_ACCESS_LEVELS, type MountAccess, type MountSpec } from './mount-table.js';
