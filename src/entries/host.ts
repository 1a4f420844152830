// `sessionfs/host`: the host backend beyond its driver factory: commands in the root, the temp sweep.
export {
  hostDriver,
  hostExec,
  sweepStaleTemp,
  type ChangeDetection,
  type HostDriver,
  type HostDriverOptions,
  type SweepResult,
} from '../backends/host/index.js';
