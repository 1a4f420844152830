import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { hostTag as ownHostTag, ownerToken } from '../../src/backends/host/owned-temp.js';
import { exportTo } from '../../src/export/export.js';
import { tempDirs } from '../../src/testing/harness.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

const tempDir = tempDirs();
const hostTag = ownHostTag();

/** The pid of a process that has exited. */
function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0']);
    child.once('error', reject);
    child.once('exit', () => resolve(child.pid as number));
  });
}

const exportTemps = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.startsWith('.sessionfs-export-'))
    .sort();

// A kill -9 between an export's temp-file write and its rename leaves the temp file in the destination.
it('an export removes the temp files that killed exports left in the directories it writes into, and nothing else', async () => {
  const dest = tempDir();
  const outside = tempDir();
  const pid = await deadPid();
  const dead = (n: number) => `.sessionfs-export-${pid}.1.${hostTag}-00000000000${n}`;
  const live = `.sessionfs-export-${ownerToken()}-0123456789ab`;
  const otherHost = `.sessionfs-export-${pid}.1.${hostTag === 'ffffff' ? 'eeeeee' : 'ffffff'}-0123456789ab`;
  mkdirSync(join(dest, 'src'));
  mkdirSync(join(dest, 'untouched'));
  for (const name of [dead(1), live, otherHost]) writeFileSync(join(dest, name), 'half');
  writeFileSync(join(dest, 'src', dead(2)), 'half');
  writeFileSync(join(dest, 'untouched', dead(3)), 'half');
  writeFileSync(join(outside, 'precious'), 'keep me');
  symlinkSync(join(outside, 'precious'), join(dest, dead(4))); // a link named like one: the link goes, never its target

  const workspace = createWorkspace(memoryDriver());
  await workspace.write('a.txt', 'A');
  await workspace.write('src/b.txt', 'B');
  const result = await exportTo(workspace, dest, { allowedHostRoots: [dest] });
  expect(result.written).toEqual(['a.txt', 'src/b.txt']);

  expect(exportTemps(dest)).toEqual([live, otherHost].sort());
  expect(exportTemps(join(dest, 'src'))).toEqual([]);
  expect(exportTemps(join(dest, 'untouched'))).toEqual([dead(3)]); // only directories the export writes into
  expect(readFileSync(join(outside, 'precious'), 'utf8')).toBe('keep me');
  expect(existsSync(join(dest, 'a.txt'))).toBe(true);
});
