export { hostDriver, type HostDriverOptions, type ChangeDetection } from './factory.js';
export type { HostDriver } from './driver.js';
export { hostExec } from './exec.js';
export { isTempName } from '../../host-files/names.js';
export { sweepStaleTemp, type SweepResult } from './owned-temp.js';
