import type * as fs from 'node:fs';
import type { DriverStat } from '../workspace/driver.js';
import { guessMimeType } from '../workspace/mime.js';
import { isExecutableMode } from './file-mode.js';
import type { NormalizedPath } from '../workspace/paths.js';

/** A driver stat from a host `fs.Stats` (the host backend's and the overlay's lower layer's). */
export function statFromHost(path: NormalizedPath, st: fs.Stats, isFile: boolean, isSymlink: boolean, version: number): DriverStat {
  const result: DriverStat = {
    isFile,
    isDirectory: st.isDirectory(),
    isSymlink,
    sizeBytes: isFile ? st.size : 0,
    createdAt: st.birthtime,
    modifiedAt: st.mtime,
  };
  if (isFile) {
    result.mimeType = guessMimeType(path);
    result.version = version;
    result.executable = isExecutableMode(st.mode);
  }
  return result;
}
