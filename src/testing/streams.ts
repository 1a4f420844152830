import { describe, expect, it } from 'vitest';
import { bytes, contentsOf, expectError, workspaces, type ComplianceHarness } from './harness.js';

/** Every byte a stream yields, joined. */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

const text = (data: Uint8Array): string => Buffer.from(data).toString('latin1');

/** Byte equality without vitest's element-by-element diff, which takes minutes on megabytes. */
function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.byteLength).toBe(expected.byteLength);
  expect(Buffer.compare(actual, expected), 'bytes differ').toBe(0);
}

/** A pattern of `size` bytes that shows any misplaced chunk. */
const pattern = (size: number): Uint8Array => Uint8Array.from({ length: size }, (_, i) => (i * 7 + (i >> 12)) & 0xff);

/** The rejection of a promise (or of a stream operation), for `expectError`. */
const rejection = (action: Promise<unknown>): Promise<unknown> => action;

/** `createReadStream` and `createWriteStream`: ranges, atomic commit on close, nothing left by an abort. */
export function streams(harness: ComplianceHarness): void {
  describe('streams', () => {
    const create = workspaces(harness);

    it('reads a whole file, and byte ranges with an inclusive end, in chunks that join to the bytes', async () => {
      const ws = await create();
      const data = pattern(3 * 1024 * 1024 + 17);
      await ws.writeBytes('big.bin', data);
      expectBytes(await drain(await ws.createReadStream('big.bin')), data);
      expectBytes(await drain(await ws.createReadStream('big.bin', { start: 5, end: 9 })), data.subarray(5, 10));
      expectBytes(await drain(await ws.createReadStream('big.bin', { start: 1024 * 1024 - 1 })), data.subarray(1024 * 1024 - 1));
      expectBytes(await drain(await ws.createReadStream('big.bin', { end: 0 })), data.subarray(0, 1));
      expect((await drain(await ws.createReadStream('big.bin', { start: data.byteLength + 10 }))).byteLength).toBe(0);
      await ws.write('empty.txt', '');
      expect((await drain(await ws.createReadStream('empty.txt'))).byteLength).toBe(0);
    });

    it('refuses what cannot be read with typed errors before any stream exists', async () => {
      const ws = await create();
      await ws.write('a.txt', 'abc');
      await ws.mkdir('dir');
      await expectError(ws.createReadStream('missing.txt'), 'FileNotFoundError', 'ENOENT');
      await expectError(ws.createReadStream('dir'), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.createReadStream('/'), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.createReadStream('a.txt', { start: -1 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.createReadStream('a.txt', { start: 2, end: 1 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.createReadStream('a.txt', { start: 1.5 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.createReadStream('a.txt', { signal: 'stop' as never }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.createReadStream('../escape.txt'), 'PathEscapeError', 'EACCES');
      await expectError(ws.createWriteStream('dir'), 'IsADirectoryError', 'EISDIR');
      await expectError(ws.createWriteStream('a.txt', { mode: 'replace' as never }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.createWriteStream('a.txt', { mode: 'create' }), 'FileExistsError', 'EEXIST');
      await expectError(ws.createWriteStream('a.txt', { ifVersion: -1 }), 'InvalidArgumentError', 'EINVAL');
      const aborted = AbortSignal.abort();
      await expectError(ws.createReadStream('a.txt', { signal: aborted }), 'AbortError', 'ABORT_ERR');
      await expectError(ws.createWriteStream('b.txt', { signal: aborted }), 'AbortError', 'ABORT_ERR');
      expect(await contentsOf(ws)).toEqual({ 'a.txt': 'abc', 'dir/': '' });
    });

    it('stops a read stream with AbortError when its signal aborts', async () => {
      const ws = await create();
      await ws.writeBytes('big.bin', pattern(4 * 1024 * 1024));
      const controller = new AbortController();
      const reader = (await ws.createReadStream('big.bin', { signal: controller.signal })).getReader();
      expect((await reader.read()).done).toBe(false);
      controller.abort();
      await expectError(rejection(reader.read()), 'AbortError', 'ABORT_ERR');
    });

    it('never mixes two versions of a file: a read stream keeps what it opened, or fails with ConflictError', async () => {
      const ws = await create();
      const data = pattern(3 * 1024 * 1024);
      await ws.writeBytes('big.bin', data);
      const reader = (await ws.createReadStream('big.bin')).getReader();
      const first = await reader.read();
      await ws.write('big.bin', 'replaced');
      const chunks = [first.value as Uint8Array];
      try {
        for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
      } catch (error) {
        expect((error as { code?: string }).code).toBe('ECONFLICT');
        return;
      }
      expectBytes(new Uint8Array(Buffer.concat(chunks)), data);
    });

    it('commits a write stream on close, atomically: before the close the file is unchanged or absent', async () => {
      const ws = await create();
      await ws.write('keep.txt', 'old');
      const data = pattern(2 * 1024 * 1024 + 3);
      const fresh = (await ws.createWriteStream('new/deep/file.bin')).getWriter();
      const over = (await ws.createWriteStream('keep.txt')).getWriter();
      for (let at = 0; at < data.byteLength; at += 700_000) await fresh.write(data.subarray(at, at + 700_000));
      await over.write(bytes('new '));
      await over.write(bytes('text'));
      expect(await ws.exists('new')).toBe(false);
      expect(await contentsOf(ws)).toEqual({ 'keep.txt': 'old' });
      await fresh.close();
      await over.close();
      expectBytes((await ws.readBytes('new/deep/file.bin')).content, data);
      expect((await ws.read('keep.txt')).content).toBe('new text');
      expect(Object.keys(await contentsOf(ws)).sort()).toEqual(['keep.txt', 'new/', 'new/deep/', 'new/deep/file.bin']);
    });

    it('leaves nothing when a write stream is aborted, errors or is given something that is not bytes', async () => {
      const ws = await create();
      await ws.write('keep.txt', 'old');
      const before = await contentsOf(ws);
      const aborted = (await ws.createWriteStream('keep.txt')).getWriter();
      await aborted.write(bytes('partial'));
      await aborted.abort(new Error('the caller gave up'));
      const created = (await ws.createWriteStream('d/new.txt')).getWriter();
      await created.write(bytes('partial'));
      await created.abort();
      const bad = (await ws.createWriteStream('bad.txt')).getWriter();
      await expectError(rejection(bad.write('text' as never)), 'InvalidArgumentError', 'EINVAL');
      const controller = new AbortController();
      const signalled = (await ws.createWriteStream('signalled.txt', { signal: controller.signal })).getWriter();
      await signalled.write(bytes('partial'));
      controller.abort();
      await expectError(rejection(signalled.write(bytes('more'))), 'AbortError', 'ABORT_ERR');
      await expectError(rejection(signalled.closed), 'AbortError', 'ABORT_ERR');
      expect(await contentsOf(ws)).toEqual(before);
      await ws.write('next.txt', 'the workspace still works');
      expect((await ws.read('next.txt')).content).toBe('the workspace still works');
    });

    it('applies the write options on close: append, create, ifVersion (checked again under the lock), versions move', async () => {
      const ws = await create();
      await ws.write('log.txt', 'one\n');
      const appending = (await ws.createWriteStream('log.txt', { mode: 'append' })).getWriter();
      await appending.write(bytes('two\n'));
      await appending.close();
      expect((await ws.read('log.txt')).content).toBe('one\ntwo');
      const seen = (await ws.stat('log.txt')).version as number;
      const guarded = (await ws.createWriteStream('log.txt', { ifVersion: seen })).getWriter();
      await guarded.write(bytes('mine'));
      await ws.write('log.txt', 'someone else');
      await expectError(rejection(guarded.close()), 'ConflictError', 'ECONFLICT');
      expect((await ws.read('log.txt')).content).toBe('someone else');
      const exclusive = (await ws.createWriteStream('only.txt', { mode: 'create' })).getWriter();
      await ws.write('only.txt', 'first');
      await exclusive.write(bytes('second'));
      await expectError(rejection(exclusive.close()), 'FileExistsError', 'EEXIST');
      expect((await ws.read('only.txt')).content).toBe('first');
      const current = (await ws.stat('log.txt')).version as number;
      const ok = (await ws.createWriteStream('log.txt', { ifVersion: current })).getWriter();
      await ok.write(bytes('final'));
      await ok.close();
      expect((await ws.read('log.txt')).content).toBe('final');
      expect((await ws.stat('log.txt')).version).not.toBe(current);
    });

    it('writes files larger than maxWriteBytes, which bounds only single writes', async () => {
      const ws = await create({ limits: { maxWriteBytes: 1024 } });
      const data = pattern(10_000);
      await expectError(ws.writeBytes('big.bin', data), 'LimitExceededError', 'EFBIG');
      const writer = (await ws.createWriteStream('big.bin')).getWriter();
      for (let at = 0; at < data.byteLength; at += 1000) await writer.write(data.subarray(at, at + 1000));
      await writer.close();
      expectBytes(await drain(await ws.createReadStream('big.bin')), data);
    });

    it('is refused on a read-only workspace (reads still stream), and snapshots see the commit', async () => {
      const ws = await create();
      await ws.write('a.txt', 'abc');
      const snap = await ws.snapshot();
      const writer = (await ws.createWriteStream('b.txt')).getWriter();
      await writer.write(bytes('streamed'));
      await writer.close();
      expect((await ws.diff(snap)).map((entry) => `${entry.status} ${entry.path}`)).toEqual(['added b.txt']);
      await ws.restore(snap);
      expect(await ws.exists('b.txt')).toBe(false);
      const readOnly = await create({ readOnly: true });
      await expectError(readOnly.createWriteStream('x.txt'), 'ReadOnlyError', 'EROFS');
      expect(text(await drain(await ws.createReadStream('a.txt')))).toBe('abc');
    });
  });
}
