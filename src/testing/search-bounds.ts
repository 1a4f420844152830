import { describe, expect, it } from 'vitest';
import type { SnapshotableWorkspace } from '../workspace/types.js';
import { expectError, workspaces, type ComplianceHarness } from './harness.js';

/** A line that makes `^(a+)+$` backtrack exponentially: a naive engine never finishes it. */
const CATASTROPHIC = '^(a+)+$';
const HOSTILE_LINE = `${'a'.repeat(48)}!`;

async function hostileProject(ws: SnapshotableWorkspace): Promise<void> {
  await ws.write('ok.txt', 'aaa\n');
  await ws.write('trap.txt', `${HOSTILE_LINE}\n`);
}

/** Whether the event loop still turns while `pending` runs: a timer set now fires before it settles. */
async function loopTurnsDuring(pending: Promise<unknown>): Promise<boolean> {
  let fired = false;
  setTimeout(() => (fired = true), 20);
  await pending.catch(() => undefined);
  return fired;
}

export function searchBounds(harness: ComplianceHarness): void {
  describe('search bounds: deadlines, aborts and hostile patterns', () => {
    const create = workspaces(harness);

    it('stops a catastrophic regex at the deadline with TimeoutError, and the next search works', async () => {
      const ws = await create();
      await hostileProject(ws);
      const started = Date.now();
      const pending = ws.grep(CATASTROPHIC, { timeoutMs: 300 });
      expect(await loopTurnsDuring(pending)).toBe(true);
      await expectError(pending, 'TimeoutError', 'ETIMEDOUT');
      // Stopped at the deadline, not after the regex gave up by itself (which takes far longer).
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await ws.grep('^a+$')).toEqual([{ path: 'ok.txt', lineNumber: 1, lineContent: 'aaa', matchStart: 0, matchEnd: 3 }]);
    });

    it('stops a catastrophic glob at the deadline too (glob and grep’s glob filter), and the next search works', async () => {
      const ws = await create();
      await ws.write(`dir/${'a'.repeat(70)}.c`, 'a\n');
      // Named `b`, so the cheap name test (the glob's last segment ends with `b`) lets it through to the regex,
      // which backtracks over the directory of `a`s before it.
      await ws.write(`dir/${'a'.repeat(70)}/b`, 'a\n');
      const hostileGlob = `**/${'*a'.repeat(8)}*b`;
      const pending = ws.glob(hostileGlob, { timeoutMs: 300 });
      expect(await loopTurnsDuring(pending)).toBe(true);
      await expectError(pending, 'TimeoutError', 'ETIMEDOUT');
      await expectError(ws.grep('a', { glob: hostileGlob, timeoutMs: 300 }), 'TimeoutError', 'ETIMEDOUT');
      expect((await ws.glob('dir/*.c')).map((m) => m.path)).toEqual([`dir/${'a'.repeat(70)}.c`]);
    });

    it('takes the default deadline from limits.searchTimeoutMs (10 s unless set)', async () => {
      expect((await create()).limits.searchTimeoutMs).toBe(10_000);
      const ws = await create({ limits: { searchTimeoutMs: 250 } });
      await hostileProject(ws);
      await expectError(ws.grep(CATASTROPHIC), 'TimeoutError', 'ETIMEDOUT');
      expect((await ws.grep('aaa', { timeoutMs: 5_000 })).map((m) => m.path)).toEqual(['ok.txt', 'trap.txt']);
    });

    it('rejects with AbortError when the signal aborts mid-search or before it starts', async () => {
      const ws = await create();
      await hostileProject(ws);
      const controller = new AbortController();
      const pending = ws.grep(CATASTROPHIC, { signal: controller.signal, timeoutMs: 60_000 });
      setTimeout(() => controller.abort(), 50);
      await expectError(pending, 'AbortError', 'ABORT_ERR');
      await expectError(ws.grep('a', { signal: AbortSignal.abort() }), 'AbortError', 'ABORT_ERR');
      await expectError(ws.glob('**', { signal: AbortSignal.abort() }), 'AbortError', 'ABORT_ERR');
      expect(await ws.glob('*.txt', { signal: new AbortController().signal })).toHaveLength(2);
    });

    it('answers other calls while a hostile search runs', async () => {
      const ws = await create();
      await hostileProject(ws);
      // The expectation is attached at once: on a loaded machine the deadline can pass before the other calls
      // return, and a rejection nobody listens to yet is an unhandled one.
      const hostile = expectError(ws.grep(CATASTROPHIC, { timeoutMs: 1_000 }), 'TimeoutError', 'ETIMEDOUT');
      expect((await ws.read('ok.txt')).content).toBe('aaa');
      expect(await ws.grep('a!$')).toHaveLength(1);
      await hostile;
    });

    it('refuses patterns over 4 KiB with InvalidArgumentError, never a bare SyntaxError', async () => {
      const ws = await create();
      await ws.write('a.txt', 'a\n');
      await expectError(ws.glob('a'.repeat(65 * 1024)), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.glob(`${'*'.repeat(4096)}a`), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.grep('a'.repeat(4097)), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.grep('a', { glob: 'a'.repeat(4097) }), 'InvalidArgumentError', 'EINVAL');
      // 4096 bytes is within the limit; so is a pattern of 2048 two-byte characters.
      expect(await ws.grep(`a{0}${'a?'.repeat(2046)}`)).toHaveLength(1);
      expect(await ws.glob('é'.repeat(2048))).toEqual([]);
      await expectError(ws.glob('é'.repeat(2049)), 'InvalidArgumentError', 'EINVAL');
    });

    it('finds nothing at a name no file can have (longer than any store allows), the same on every backend', async () => {
      const ws = await create();
      const overLong = 'é'.repeat(2000);
      expect(await ws.exists(overLong)).toBe(false);
      expect(await ws.exists(`dir/${overLong}/x`)).toBe(false);
      expect(await ws.glob(overLong)).toEqual([]);
      expect(await ws.grep('x', { path: overLong })).toEqual([]);
    });

    it('rejects a deadline that is not a positive number', async () => {
      const ws = await create();
      for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
        await expectError(ws.grep('a', { timeoutMs }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.glob('**', { timeoutMs: 0 }), 'InvalidArgumentError', 'EINVAL');
      await expectError(ws.grep('a', { signal: {} as AbortSignal }), 'InvalidArgumentError', 'EINVAL');
    });
  });
}
