import { describe, expect, it } from 'vitest';
import { memoryAuditSink, type WatchEvent } from '../../src/governance/index.js';
import { contentsOf, expectError } from '../../src/testing/harness.js';
import { SESSION_BACKENDS } from '../support/backends.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Writes `chunks` through a write stream and closes it. */
async function stream(ws: SnapshotableWorkspace, path: string, chunks: string[]): Promise<void> {
  const writer = (await ws.createWriteStream(path)).getWriter();
  for (const chunk of chunks) await writer.write(bytes(chunk));
  await writer.close();
}

describe.each(SESSION_BACKENDS)('streams under governance on $name', ({ open: create }) => {
  it('applies the policy as a write would: denied paths, maxFileBytes as bytes arrive, quotas and confirm at the commit', async () => {
    const asked: string[] = [];
    const ws = create({
      policy: {
        deny: ['**/.env'],
        maxFileBytes: 8,
        quotaBytes: 12,
        confirm: (op) => (asked.push(`${op.op} ${op.path}`), op.path !== 'keep.txt'),
      },
    });
    try {
      await expectError(ws.createWriteStream('.env'), 'PolicyError', 'EPERM');
      await expectError(ws.createReadStream('.env'), 'PolicyError', 'EPERM');
      const big = (await ws.createWriteStream('big.txt')).getWriter();
      await big.write(bytes('12345'));
      await expectError(big.write(bytes('6789')), 'LimitExceededError', 'EFBIG');
      await stream(ws, 'keep.txt', ['1234567']);
      await expectError(stream(ws, 'keep.txt', ['new']), 'PolicyError', 'EPERM');
      expect(asked).toEqual(['overwrite keep.txt']);
      await expectError(stream(ws, 'other.txt', ['123456']), 'QuotaExceededError', 'EDQUOT');
      expect(await contentsOf(ws)).toEqual({ 'keep.txt': '1234567' });
    } finally {
      await ws.dispose();
    }
  });

  it('is audited (the open, then the commit as writeBytes with its byte count) and watched like a write', async () => {
    const sink = memoryAuditSink({ max: 100 });
    const ws = create({ audit: [sink] });
    const controller = new AbortController();
    const seen: WatchEvent[] = [];
    const watching = (async () => {
      for await (const event of ws.watch({ signal: controller.signal })) seen.push(event);
    })();
    try {
      await stream(ws, 'a.bin', ['abc', 'defg']);
      await stream(ws, 'a.bin', ['x']);
      await drainText(await ws.createReadStream('a.bin'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen).toEqual([
        { type: 'created', path: 'a.bin' },
        { type: 'modified', path: 'a.bin' },
      ]);
      expect(sink.events.map((event) => [event.op, event.path, event.bytes, event.outcome])).toEqual([
        ['createWriteStream', 'a.bin', undefined, 'ok'],
        ['writeBytes', 'a.bin', 7, 'ok'],
        ['createWriteStream', 'a.bin', undefined, 'ok'],
        ['writeBytes', 'a.bin', 1, 'ok'],
        ['createReadStream', 'a.bin', undefined, 'ok'],
      ]);
    } finally {
      controller.abort();
      await watching;
      await ws.dispose();
    }
  });
});

async function drainText(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString();
  return text;
}
