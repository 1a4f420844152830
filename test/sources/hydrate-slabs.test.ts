import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { exportTo } from '../../src/export/index.js';
import { hydrate } from '../../src/sources/index.js';
import { tempDirs } from '../../src/testing/harness.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import type { SnapshotableWorkspace, WriteFilesEntry } from '../../src/workspace/types.js';

// Hydration reads small files into slabs shared by several of them (src/sources/read-files.ts). A file's
// bytes must stay its own whatever happens to the other files of its slab, and no slab may leave the
// workspace whole.

const dirs = tempDirs();

/** `count` small files (enough to be read on the reader threads, many to a slab) and one large one. */
function project(count: number): { root: string; files: Map<string, Buffer> } {
  const root = dirs();
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i += 1) files.set(`d${i % 5}/f${String(i).padStart(4, '0')}.bin`, randomBytes(1 + ((i * 37) % 900)));
  files.set('d2/large.bin', randomBytes(400 * 1024));
  for (const [path, bytes] of files) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), bytes);
  }
  return { root, files };
}

async function expectBytes(workspace: SnapshotableWorkspace, files: Map<string, Buffer>, prefix: string): Promise<void> {
  for (const [path, bytes] of files)
    expect(Buffer.from((await workspace.readBytes(`${prefix}/${path}`)).content).equals(bytes), path).toBe(true);
}

describe('hydrated files read into shared slabs', () => {
  it('keep their bytes when the other files of their slab are overwritten or deleted, and through a snapshot restore', async () => {
    const { root, files } = project(600);
    const workspace = createWorkspace(memoryDriver());
    await hydrate(workspace, [{ hostPath: root, path: 'p' }], { allowedHostRoots: [root] });
    const before = await workspace.snapshot({ tag: 'hydrated' });
    const kept = new Map<string, Buffer>();
    let i = 0;
    for (const [path, bytes] of files) {
      if (i % 3 === 0) await workspace.writeBytes(`p/${path}`, new Uint8Array(bytes.byteLength).fill(7));
      else if (i % 3 === 1) await workspace.delete(`p/${path}`);
      else kept.set(path, bytes);
      i += 1;
    }
    await expectBytes(workspace, kept, 'p');
    await workspace.restore(before);
    await expectBytes(workspace, files, 'p');
  });

  it('are read out as copies of their own bytes, never a view of a slab', async () => {
    const { root, files } = project(300);
    const workspace = createWorkspace(memoryDriver());
    await hydrate(workspace, [{ hostPath: root, path: 'p' }], { allowedHostRoots: [root] });
    const first = (await workspace.readBytes('p/d0/f0000.bin')).content;
    expect(first.buffer.byteLength).toBe(first.byteLength);
    first.fill(0);
    await expectBytes(workspace, files, 'p');
  });

  it('export byte-exact', async () => {
    const { root, files } = project(300);
    const workspace = createWorkspace(memoryDriver());
    await hydrate(workspace, [{ hostPath: root, path: 'p' }], { allowedHostRoots: [root] });
    const out = dirs();
    await exportTo(workspace, out, { allowedHostRoots: [out] });
    for (const [path, bytes] of files) expect(readFileSync(join(out, 'p', path)).equals(bytes), path).toBe(true);
  });

  it('reach a workspace not built by createWorkspace as copies of their own: one that moves their memory away loses no other file', async () => {
    const { root, files } = project(600);
    const inner = createWorkspace(memoryDriver());
    const shared: string[] = [];
    // A workspace of its own kind, as a caller may pass: it moves each file's memory elsewhere once written.
    const mover = new Proxy(inner, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property === 'writeFiles') {
          return async (entries: WriteFilesEntry[], ...rest: unknown[]) => {
            const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, [entries, ...rest]);
            for (const entry of entries) {
              if (entry.kind !== 'file') continue;
              if (entry.content.buffer.byteLength !== entry.content.byteLength) shared.push(entry.path);
              structuredClone(entry.content.buffer, { transfer: [entry.content.buffer as ArrayBuffer] });
            }
            return result;
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const result = await hydrate(mover, [{ hostPath: root, path: 'p' }], { allowedHostRoots: [root] });
    expect(result.files).toBe(files.size);
    expect(shared).toEqual([]);
    await expectBytes(inner, files, 'p');
  });
});
