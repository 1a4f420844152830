import { describe, expect, it } from 'vitest';
import { protocolFiles } from './edits.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

describe('fork of a memory workspace', () => {
  it('gives an independent workspace with the same content and the history before the fork', async () => {
    const parent = createWorkspace(memoryDriver(), { limits: { maxWriteBytes: 1024 } });
    await parent.write('a.txt', 'one');
    await parent.mkdir('empty');
    const early = await parent.snapshot({ tag: 'early' });
    await parent.write('a.txt', 'two');
    const fork = await parent.fork();
    expect(fork.backend).toBe('memory');
    expect(fork.limits.maxWriteBytes).toBe(1024);
    expect(await protocolFiles(fork)).toEqual(await protocolFiles(parent));
    expect((await fork.stat('empty')).isDirectory).toBe(true);

    // Independent content: writes on either side stay there.
    await fork.write('a.txt', 'fork');
    await parent.write('b.txt', 'parent only');
    expect((await parent.read('a.txt')).content).toBe('two');
    expect(await fork.exists('b.txt')).toBe(false);

    // The fork restores, diffs and patches a snapshot its parent took before the fork.
    expect(await fork.diff(early)).toEqual([{ path: 'a.txt', status: 'modified' }]);
    expect(await fork.patch(early)).toContain('-one\n\\ No newline at end of file\n+fork\n');
    await fork.restore(early);
    expect((await fork.read('a.txt')).content).toBe('one');
    expect((await parent.read('a.txt')).content).toBe('two');

    // Snapshots taken after the fork belong to the side that took them.
    const forkOnly = await fork.snapshot();
    const parentOnly = await parent.snapshot();
    await expect(parent.restore(forkOnly)).rejects.toMatchObject({ code: 'ESNAPSHOT' });
    await expect(fork.restore(parentOnly)).rejects.toMatchObject({ code: 'ESNAPSHOT' });

    // Disposing the parent leaves the fork's history intact.
    await parent.dispose();
    await fork.restore(early);
    expect((await fork.read('a.txt')).content).toBe('one');
    await fork.dispose();
  });

  it('keeps the read-only state and the policy', async () => {
    const parent = createWorkspace(memoryDriver(), { policy: { deny: ['secret/**'] } });
    await parent.write('ok.txt', 'ok');
    parent.seal();
    const fork = await parent.fork();
    expect(fork.readOnly).toBe(true);
    await expect(fork.write('ok.txt', 'changed')).rejects.toMatchObject({ code: 'EROFS' });
    await expect(fork.read('secret/x')).rejects.toMatchObject({ code: 'EPERM' });
    await parent.dispose();
    await fork.dispose();
  });
});
