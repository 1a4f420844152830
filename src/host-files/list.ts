import * as fs from 'node:fs';
import type { DriverListEntry } from '../workspace/driver.js';
import { isVisibleName } from './names.js';
import type { PinnedDir } from './sandbox.js';

/** Children of a pinned directory with their kinds (special files count as files; never followed). */
export async function listPinned(pin: PinnedDir): Promise<DriverListEntry[]> {
  const entries: DriverListEntry[] = [];
  for (const dirent of await fs.promises.readdir(pin.path, { withFileTypes: true })) {
    const name = dirent.name;
    if (!isVisibleName(name)) continue;
    let st: fs.Stats;
    try {
      st = await fs.promises.lstat(pin.at(name));
    } catch {
      continue;
    }
    entries.push({ name, kind: st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : 'file' });
  }
  return entries;
}
