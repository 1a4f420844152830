import * as fs from 'node:fs';
import type { EtcSource } from './system-view.js';

/** The descriptor number the first handed-over file gets in the child (after stdin, stdout and stderr). */
export const FIRST_PASSED_FD = 3;

/** bwrap arguments filling the sandbox's /etc, and the open files they name (to pass as the child's fds 3…). */
export interface OpenedEtc {
  args: string[];
  fds: number[];
  /** The largest file's size: bubblewrap writes its copy under the sandbox's file size limit. */
  largest: number;
  close(): void;
}

/**
 * Fills the sandbox's /etc, opened afresh for each run: a file is handed to bubblewrap as an open descriptor
 * whose content it copies into the sandbox's own root (`--file`, read-only there like the rest of that root),
 * a directory is bound read-only. A bind costs bubblewrap two mounts and a read of the whole mount table; a
 * copy of these few small files costs neither (~2 ms less CPU per start with the default entries). bwrap
 * closes the descriptors before the program starts. An optional entry the host lacks is left out.
 */
export function openEtc(entries: readonly EtcSource[]): OpenedEtc {
  const args: string[] = [];
  const fds: number[] = [];
  let largest = 0;
  const close = () => {
    for (const fd of fds.splice(0)) fs.closeSync(fd);
  };
  try {
    for (const entry of entries) {
      let fd: number;
      try {
        // O_NONBLOCK: a FIFO put in /etc does not hold the start up.
        fd = fs.openSync(entry.source, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      } catch (error) {
        if (!entry.optional || (error as NodeJS.ErrnoException).code !== 'ENOENT') args.push(...bind(entry));
        continue;
      }
      const stat = fs.fstatSync(fd);
      if (stat.isFile()) {
        largest = Math.max(largest, stat.size);
        args.push('--perms', '0444', '--file', String(FIRST_PASSED_FD + fds.length), entry.target);
        fds.push(fd);
      } else {
        fs.closeSync(fd);
        args.push(...bind(entry));
      }
    }
  } catch (error) {
    close();
    throw error;
  }
  return { args, fds, largest, close };
}

function bind(entry: EtcSource): string[] {
  return [entry.optional ? '--ro-bind-try' : '--ro-bind', entry.source, entry.target];
}
