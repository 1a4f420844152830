import { describe, expect, it } from 'vitest';
import { kvDriver } from '../../examples/kv-backend.js';
import { memoryBlobStore } from '../../src/snapshots/blob-store.js';
import { WorkspaceSnapshotSchema } from '../../src/snapshots/record.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import type { BackendDriver } from '../../src/workspace/driver.js';
import { expectError } from '../../src/testing/harness.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

/** The example's driver, counting the files the shared layer reads through it. */
function countingDriver(): { driver: BackendDriver; reads: string[] } {
  const inner = kvDriver();
  const reads: string[] = [];
  const driver: BackendDriver = {
    ...inner,
    readFile: (path, range) => {
      reads.push(path);
      return inner.readFile(path, range);
    },
  };
  return { driver, reads };
}

describe('createWorkspace: the shared layer over any driver', () => {
  it('reports the driver name as the backend and in snapshot records', async () => {
    const ws = createWorkspace(kvDriver());
    expect(ws.backend).toBe('kv');
    expect(ws.root).toBe('/');
    const record = await ws.snapshot();
    expect(record).toMatchObject({ backend: 'kv', root: '/' });
    expect(record.ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(WorkspaceSnapshotSchema.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
  });

  it('refuses a driver without a name or without a primitive', () => {
    const { stat: _stat, ...withoutStat } = kvDriver();
    expect(() => createWorkspace(withoutStat as BackendDriver)).toThrow(/lacks stat\(\)/);
    expect(() => createWorkspace({ ...kvDriver(), name: '' })).toThrow(/name/);
  });

  it('maps Node-style driver codes to WorkspaceErrors and never shows the driver message', async () => {
    const secret = '/srv/private/bucket-key';
    const refuse = (code: string) => async () => {
      throw Object.assign(new Error(`${code} at ${secret}`), { code });
    };
    const ws = createWorkspace({ ...kvDriver(), readFile: refuse('EACCES'), mkdir: refuse('ENOSPC'), list: refuse('EIO') });
    await ws.write('a.txt', 'x');
    const denied = await expectError(ws.read('a.txt'), 'WorkspaceError', 'EACCES');
    const full = await expectError(ws.mkdir('d'), 'LimitExceededError', 'EFBIG');
    const other = await expectError(ws.list('/'), 'WorkspaceError', 'EINVAL');
    for (const error of [denied, full, other]) expect(error.message).not.toContain(secret);
    expect(other.message).toContain('EIO');
  });

  it('reports ENOTDIR for a path below a file even when the driver says ENOENT', async () => {
    const ws = createWorkspace(kvDriver());
    await ws.write('f.txt', 'x');
    const error = await expectError(ws.readBytes('f.txt/inner/deeper'), 'NotADirectoryError', 'ENOTDIR');
    expect(error.path).toBe('f.txt');
  });
});

describe('the default snapshotter (content-addressed blobs)', () => {
  it('reads every file once for the first snapshot, then only what the protocol changed', async () => {
    const { driver, reads } = countingDriver();
    const ws = createWorkspace(driver);
    for (let i = 0; i < 20; i += 1) await ws.write(`src/dir${i % 4}/f${i}.txt`, `file ${i}`);
    await ws.snapshot();
    expect(reads.length).toBe(20);
    reads.length = 0;
    await ws.write('src/dir1/f1.txt', 'changed');
    await ws.write('src/new.txt', 'new');
    await ws.delete('src/dir2', { recursive: true });
    const second = await ws.snapshot();
    expect(reads.sort()).toEqual(['src/dir1/f1.txt', 'src/new.txt']);
    reads.length = 0;
    await ws.snapshot();
    expect(reads).toEqual([]);
    expect(await ws.diff(second)).toEqual([]);
  });

  it('stores unchanged subtrees once: a deep change adds one blob and the manifests above it', async () => {
    const blobs = memoryBlobStore();
    const ws = createWorkspace(kvDriver(), { blobs });
    for (let i = 0; i < 10; i += 1) await ws.write(`a/b/c/f${i}.txt`, `content ${i}`);
    for (let i = 0; i < 10; i += 1) await ws.write(`other/g${i}.txt`, `other ${i}`);
    await ws.snapshot();
    const before = blobs.size;
    await ws.write('a/b/c/f3.txt', 'changed');
    await ws.snapshot();
    // The new content, and new manifests for c, b, a and the root.
    expect(blobs.size - before).toBe(5);
  });

  it('restores only what differs, in any order, and diffs between snapshots', async () => {
    const { driver, reads } = countingDriver();
    const ws = createWorkspace(driver);
    await ws.write('keep.txt', 'same');
    await ws.write('dir/a.txt', 'one');
    const v1 = await ws.snapshot();
    await ws.write('dir/a.txt', 'two');
    await ws.mkdir('empty');
    await ws.delete('keep.txt');
    const v2 = await ws.snapshot();
    expect(await ws.diff(v1, v2)).toEqual([
      { path: 'dir/a.txt', status: 'modified' },
      { path: 'keep.txt', status: 'deleted' },
    ]);
    await ws.restore(v1);
    expect(await ws.exists('empty')).toBe(false);
    expect((await ws.read('keep.txt')).content).toBe('same');
    await ws.restore(v2);
    expect((await ws.read('dir/a.txt')).content).toBe('two');
    expect((await ws.stat('empty')).isDirectory).toBe(true);
    reads.length = 0;
    expect(await ws.diff(v2)).toEqual([]);
    expect(reads).toEqual([]);
  });
});

describe('open snapshot records', () => {
  it('accept any backend name and a meta object of JSON values', () => {
    const record = { id: 'x', backend: 's3', ref: 'r', createdAt: new Date().toISOString(), root: '/', meta: { bucket: 'b', n: 1 } };
    expect(WorkspaceSnapshotSchema.parse(record)).toEqual(record);
  });

  it('still restore records written before the API opened (literal host and memory records)', async () => {
    const host = createWorkspace(hostDriver());
    const memory = createWorkspace(memoryDriver());
    try {
      for (const ws of [host, memory]) {
        await ws.write('a.txt', 'old');
        const taken = await ws.snapshot({ tag: 't' });
        await ws.write('a.txt', 'new');
        // Exactly the fields (and only those) a 0.1 record had.
        const literal: Record<string, string> = {
          id: taken.id,
          backend: taken.backend,
          ref: taken.ref,
          createdAt: taken.createdAt,
          root: taken.root,
          tag: 't',
        };
        if (taken.gitDir !== undefined) literal.gitDir = taken.gitDir;
        await ws.restore(JSON.parse(JSON.stringify(literal)));
        expect((await ws.read('a.txt')).content).toBe('old');
      }
    } finally {
      await host.dispose();
      await memory.dispose();
    }
  });
});

describe('writeFiles: the bulk write behind hydration', () => {
  it('every workspace built on a driver has it, memory and host included', async () => {
    const host = createWorkspace(hostDriver());
    try {
      for (const ws of [createWorkspace(kvDriver()), createWorkspace(memoryDriver()), host]) expect(typeof ws.writeFiles).toBe('function');
    } finally {
      await host.dispose();
    }
  });

  it("uses the driver's own bulk primitive after checking every path, skips reserved names, and names the failing entry", async () => {
    const inner = kvDriver();
    const batches: string[][] = [];
    const driver: BackendDriver = {
      ...inner,
      reservedName: (name) => (name.startsWith('.kv-') ? 'reserved by the kv store' : undefined),
      writeFiles: async (entries) => {
        batches.push(entries.map((entry) => `${entry.kind} ${entry.path}`));
        for (const entry of entries) {
          if (entry.path === 'full.txt')
            throw Object.assign(new Error('/secret/host/path: no space'), { code: 'ENOSPC', path: 'full.txt' });
          if (entry.kind === 'directory') await inner.mkdir(entry.path);
          else if (entry.kind === 'file') await inner.writeFile(entry.path, entry.content, { mode: 'overwrite' });
        }
      },
    };
    const ws = createWorkspace(driver);
    const content = new TextEncoder().encode('x');
    const result = await ws.writeFiles([
      { kind: 'directory', path: 'd' },
      { kind: 'file', path: '/d/a.txt', content },
      { kind: 'file', path: 'd/.kv-tmp/b.txt', content },
    ]);
    expect(result).toEqual({ files: 1, bytes: 1, skipped: [{ path: 'd/.kv-tmp/b.txt', reason: 'reserved by the kv store' }] });
    expect(batches).toEqual([['directory d', 'file d/a.txt']]);
    const error = await expectError(
      ws.writeFiles([
        { kind: 'file', path: 'ok.txt', content },
        { kind: 'file', path: 'full.txt', content },
      ]),
      'LimitExceededError',
      'EFBIG',
    );
    expect(error.path).toBe('full.txt');
    expect(error.message).not.toContain('secret');
    expect(batches).toHaveLength(2);
    // A path that fails its checks reaches no driver call at all.
    await expectError(ws.writeFiles([{ kind: 'file', path: '../out.txt', content }]), 'PathEscapeError', 'EACCES');
    expect(batches).toHaveLength(2);
  });
});
