import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { workspaces, type ComplianceHarness } from './harness.js';

const TEXT = 'hello';

/**
 * Ways a caller holds the bytes "hello". A `Buffer`'s `slice()` is a view, not a copy, and small Buffers
 * share one pooled `ArrayBuffer`: a store that keeps what it was given, or "copies" with `slice()`, or
 * reads `.buffer` without the offset, fails here.
 */
const SOURCES: Record<string, () => Uint8Array> = {
  'Buffer.from': () => Buffer.from(TEXT),
  'a pooled Buffer slice': () => Buffer.from(`xx${TEXT}xx`).subarray(2, 2 + TEXT.length),
  'Buffer.allocUnsafe (pooled)': () => {
    const buffer = Buffer.allocUnsafe(TEXT.length);
    buffer.write(TEXT);
    return buffer;
  },
  Uint8Array: () => new TextEncoder().encode(TEXT),
  'a Uint8Array view': () => new TextEncoder().encode(`xx${TEXT}xx`).subarray(2, 2 + TEXT.length),
};

/** How bytes go in: each resolves once the workspace has taken them. */
const WAYS_IN: Record<string, (ws: SnapshotableWorkspace, path: string, data: Uint8Array) => Promise<unknown>> = {
  writeBytes: (ws, path, data) => ws.writeBytes(path, data),
  'writeBytes (append)': (ws, path, data) => ws.writeBytes(path, data, { mode: 'append' }),
  writeFiles: async (ws, path, data) => ws.writeFiles?.([{ kind: 'file', path, content: data }]),
  'a write stream chunk': async (ws, path, data) => {
    const writer = (await ws.createWriteStream(path)).getWriter();
    // Changed as soon as write() returns, before the stream has taken it in: the chunk is the caller's again.
    const written = writer.write(data);
    data.fill(0x2a);
    await written;
    await writer.close();
  },
};

const text = (data: Uint8Array): string => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1');

async function contentOf(ws: SnapshotableWorkspace, path: string): Promise<string> {
  return text((await ws.readBytes(path)).content);
}

/** Bytes never alias: what a caller gives or gets is its own, and changing it changes no file and no snapshot. */
export function bytesNeverAlias(harness: ComplianceHarness): void {
  describe('bytes never alias', () => {
    const create = workspaces(harness);

    for (const [source, make] of Object.entries(SOURCES))
      for (const [way, put] of Object.entries(WAYS_IN))
        it(`keeps ${source} given through ${way}: changing it later changes neither the file nor a snapshot`, async () => {
          const ws = await create();
          if (way === 'writeFiles' && ws.writeFiles === undefined) return;
          const data = make();
          await put(ws, 'f.txt', data);
          expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
          const snapshot = await ws.snapshot();
          data.fill(0x21);
          expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
          await ws.write('f.txt', 'changed');
          await ws.restore(snapshot);
          expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
        });

    it('hands out bytes of its own from readBytes: changing them changes neither the file nor a snapshot', async () => {
      const ws = await create();
      await ws.writeBytes('f.txt', Buffer.from(TEXT));
      const snapshot = await ws.snapshot();
      for (const options of [{}, { offset: 1, limit: 3 }]) (await ws.readBytes('f.txt', options)).content.fill(0x21);
      expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
      await ws.write('f.txt', 'changed');
      await ws.restore(snapshot);
      (await ws.readBytes('f.txt')).content.fill(0x21);
      expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
    });

    it('hands out chunks of its own from a read stream', async () => {
      const ws = await create();
      await ws.writeBytes('f.txt', Buffer.from(TEXT));
      const snapshot = await ws.snapshot();
      for (const range of [{}, { start: 1, end: 3 }])
        for await (const chunk of (await ws.createReadStream('f.txt', range)) as unknown as AsyncIterable<Uint8Array>) chunk.fill(0x21);
      expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
      await ws.restore(snapshot);
      expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
    });

    it('hands out bytes of its own from a snapshot tree', async () => {
      const ws = await create();
      await ws.writeBytes('f.txt', Buffer.from(TEXT));
      const snapshot = await ws.snapshot();
      const tree = await ws.snapshotTree(snapshot).catch(() => undefined); // optional for a backend's own snapshotter
      const entry = await tree?.entry('f.txt');
      if (entry === undefined || entry.kind !== 'file') return;
      (await entry.bytes()).fill(0x21);
      expect(text(await entry.bytes())).toBe(TEXT);
      await ws.write('f.txt', 'changed');
      await ws.restore(snapshot);
      expect(await contentOf(ws, 'f.txt')).toBe(TEXT);
    });

    it('copies a file by its bytes: changing what a read of the copy returned changes neither file', async () => {
      const ws = await create();
      await ws.writeBytes('a.txt', Buffer.from(TEXT));
      await ws.copy('a.txt', 'b.txt');
      (await ws.readBytes('b.txt')).content.fill(0x21);
      (await ws.readBytes('a.txt')).content.fill(0x21);
      expect([await contentOf(ws, 'a.txt'), await contentOf(ws, 'b.txt')]).toEqual([TEXT, TEXT]);
    });
  });
}
