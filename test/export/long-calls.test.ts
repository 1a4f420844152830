import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { exportTo } from '../../src/export/export.js';
import { ExportIncompleteError } from '../../src/export/export-plan.js';
import { pullSnapshot, pushSnapshot } from '../../src/export/remote.js';
import type { Progress } from '../../src/workspace/progress.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { contentsOf, tempDirs } from '../../src/testing/harness.js';
import { SESSION_BACKENDS } from '../support/backends.js';

async function project(workspace: SnapshotableWorkspace, files = 30, version = 'one'): Promise<void> {
  for (let i = 0; i < files; i += 1) await workspace.write(`src/d${i % 3}/f${i}.txt`, `${version} ${i}\n`);
}

/** Every file under a host directory, relative, sorted. */
function hostFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as { isFile(): boolean; parentPath: string; name: string }[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

describe.each(SESSION_BACKENDS)('signal and onProgress on the export calls ($name)', (backend) => {
  const tempDir = tempDirs();

  it('exportTo reports planned and written entries, increasing, ending with total === done', async () => {
    const workspace = backend.open();
    try {
      await project(workspace);
      const dest = tempDir();
      const events: Progress[] = [];
      const result = await exportTo(workspace, dest, { allowedHostRoots: [dest], onProgress: (event) => events.push({ ...event }) });
      expect(result.written).toHaveLength(30);
      for (let i = 1; i < events.length; i += 1)
        expect((events[i] as Progress).done).toBeGreaterThanOrEqual((events[i - 1] as Progress).done);
      expect(new Set(events.map((event) => event.phase))).toEqual(new Set(['plan', 'write']));
      expect(events.filter((event) => event.phase === 'write' && event.path !== undefined).map((event) => event.path)).toContain(
        'src/d1/f1.txt',
      );
      const last = events.at(-1) as Progress;
      expect(last.total).toBe(last.done);
    } finally {
      await workspace.dispose();
    }
  });

  it('exportTo with an aborted signal writes nothing (ABORT_ERR)', async () => {
    const workspace = backend.open();
    try {
      await project(workspace);
      const dest = tempDir();
      await expect(exportTo(workspace, dest, { allowedHostRoots: [dest], signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'AbortError',
        code: 'ABORT_ERR',
      });
      const controller = new AbortController();
      const planning = (event: Progress): void => {
        if (event.phase === 'plan') controller.abort();
      };
      await expect(
        exportTo(workspace, dest, { allowedHostRoots: [dest], signal: controller.signal, onProgress: planning }),
      ).rejects.toMatchObject({
        code: 'ABORT_ERR',
      });
      expect(hostFiles(dest)).toEqual([]);
    } finally {
      await workspace.dispose();
    }
  });

  it('exportTo aborted while writing reports exactly the files it wrote (ExportIncompleteError, ABORT_ERR)', async () => {
    const workspace = backend.open();
    try {
      await project(workspace);
      const dest = tempDir();
      const controller = new AbortController();
      let writes = 0;
      const onProgress = (event: Progress): void => {
        if (event.phase === 'write' && event.path !== undefined && ++writes === 10) controller.abort();
      };
      const error = await exportTo(workspace, dest, { allowedHostRoots: [dest], signal: controller.signal, onProgress }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ExportIncompleteError);
      const exported = (error as ExportIncompleteError).exported;
      expect((error as ExportIncompleteError).code).toBe('ABORT_ERR');
      expect(hostFiles(dest)).toEqual(exported.written.filter((path) => path.includes('.')).sort());
      expect(exported.written.length).toBeGreaterThan(0);
      expect(hostFiles(dest).length).toBeLessThan(30);
    } finally {
      await workspace.dispose();
    }
  });

  it('pullSnapshot aborted while writing leaves the workspace as it was; pushSnapshot aborted pushes nothing', async () => {
    const remote = join(tempDir(), 'remote.git');
    await execa('git', ['init', '--quiet', '--bare', remote]);
    const source = backend.open();
    const target = backend.open();
    try {
      await project(source, 30, 'remote');
      const snapshot = await source.snapshot();
      await expect(pushSnapshot(source, snapshot, { remote, signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORT_ERR' });
      expect((await execa('git', ['--git-dir', remote, 'for-each-ref'])).stdout).toBe('');
      // Aborted part way through writing the files: nothing reaches the remote either.
      const stop = new AbortController();
      const midway = (event: Progress): void => (event.phase === 'write' && event.path !== undefined ? stop.abort() : undefined);
      await expect(pushSnapshot(source, snapshot, { remote, signal: stop.signal, onProgress: midway })).rejects.toMatchObject({
        code: 'ABORT_ERR',
      });
      expect(stop.signal.aborted).toBe(true);
      expect((await execa('git', ['--git-dir', remote, 'for-each-ref'])).stdout).toBe('');
      const events: Progress[] = [];
      const pushed = await pushSnapshot(source, snapshot, { remote, onProgress: (event) => events.push(event) });
      // 34 entries read (30 files, src and its 3 directories), then 30 files written, then the push.
      expect(new Set(events.map((event) => event.phase))).toEqual(new Set(['read', 'write', 'push']));
      expect(events.find((event) => event.phase === 'write')).toMatchObject({ total: 64 });
      expect(events.at(-1)).toMatchObject({ done: 64, total: 64 });

      await project(target, 20, 'local');
      const before = await contentsOf(target);
      const controller = new AbortController();
      let writes = 0;
      const onProgress = (event: Progress): void => {
        if (event.phase === 'write' && event.path !== undefined && ++writes === 5) controller.abort();
      };
      await expect(pullSnapshot(target, { remote, ref: pushed.ref, signal: controller.signal, onProgress })).rejects.toMatchObject({
        name: 'AbortError',
        code: 'ABORT_ERR',
      });
      expect(await contentsOf(target)).toEqual(before);
      await pullSnapshot(target, { remote, ref: pushed.ref });
      expect(await contentsOf(target)).toEqual(await contentsOf(source));
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });
});
